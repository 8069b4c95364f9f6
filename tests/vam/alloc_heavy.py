"""An allocation-heavy, deterministic Python workload for libvam's real-program
test (run with PYTHONMALLOC=malloc so every object goes through malloc).
Prints digests; the output must be identical under every allocator."""
import hashlib
import json
import random
import sys

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
rng = random.Random(2005)
h = hashlib.sha256()

# Many small objects of many sizes: dicts, tuples, strings.
for rnd in range(3 * scale):
    table = {}
    for i in range(60000):
        key = "k%d-%s" % (i, "x" * (i % 37))
        table[key] = (i, str(i * 7), [i] * (i % 9))
    for i in range(0, 60000, 3):
        del table["k%d-%s" % (i, "x" * (i % 37))]
    h.update(str(len(table)).encode())
    h.update(json.dumps(sorted(table.items())[:200]).encode())

# Growing and shrinking containers (realloc of all sizes).
lists = [[] for _ in range(200)]
for i in range(200000 * scale):
    l = lists[rng.randrange(200)]
    if rng.random() < 0.7:
        l.append(rng.random())
    elif l:
        l.pop()
h.update(repr([len(l) for l in lists]).encode())

# Big byte strings and joins (large and huge objects).
blobs = []
for i in range(300 * scale):
    n = rng.choice([100, 5000, 40000, 300000, 2000000])
    blobs.append(bytes([i % 256]) * n)
    if len(blobs) > 20:
        blobs.pop(rng.randrange(len(blobs)))
h.update(hashlib.sha256(b"".join(blobs)).digest())

# A tree of objects, then drop it.
class Node:
    __slots__ = ("left", "right", "value")
    def __init__(self, depth, v):
        self.value = v
        self.left = Node(depth - 1, v * 2) if depth else None
        self.right = Node(depth - 1, v * 2 + 1) if depth else None

def total(n):
    return 0 if n is None else n.value + total(n.left) + total(n.right)

for d in range(14, 17):
    h.update(str(total(Node(d, 1))).encode())

print("alloc_heavy:", h.hexdigest())
