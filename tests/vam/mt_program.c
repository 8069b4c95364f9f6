/* mt_program — a deterministic multi-threaded allocating program for the
 * real-program test: threads build linked structures, pass them to each
 * other through a queue, free them remotely, and print checksums that do
 * not depend on scheduling. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ITEMS 20000

struct item { struct item *next; size_t n; unsigned char data[]; };

static struct item *queue[THREADS];
static pthread_mutex_t lock[THREADS];
static uint64_t sums[THREADS];

static void *producer_consumer(void *arg) {
  const int id = (int)(intptr_t)arg;
  uint64_t x = 88172645463325252ull + id, sum = 0;
  for (int i = 0; i < ITEMS; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    size_t n = x % 4 == 0 ? x % 70000 : x % 300;
    struct item *it = malloc(sizeof *it + n);
    it->n = n;
    for (size_t k = 0; k < n; ++k) it->data[k] = (unsigned char)(k * 13 + n);
    const int to = (id + 1) % THREADS;
    pthread_mutex_lock(&lock[to]);
    it->next = queue[to];
    queue[to] = it;
    pthread_mutex_unlock(&lock[to]);
    if (i % 64 == 0) {
      /* take what others sent us; verify and free (a remote free) */
      pthread_mutex_lock(&lock[id]);
      struct item *l = queue[id];
      queue[id] = NULL;
      pthread_mutex_unlock(&lock[id]);
      while (l) {
        struct item *next = l->next;
        for (size_t k = 0; k < l->n; ++k)
          if (l->data[k] != (unsigned char)(k * 13 + l->n)) { fprintf(stderr, "corrupt\n"); exit(1); }
        free(l);
        l = next;
      }
    }
    sum += n;
  }
  sums[id] = sum;
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; ++i) pthread_mutex_init(&lock[i], NULL);
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, producer_consumer, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  uint64_t left = 0;
  for (int i = 0; i < THREADS; ++i) {
    for (struct item *l = queue[i], *n; l; l = n) { n = l->next; left += l->n; free(l); }
    printf("thread %d allocated %llu bytes\n", i, (unsigned long long)sums[i]);
  }
  (void)left;
  printf("mt_program: done\n");
  return 0;
}
