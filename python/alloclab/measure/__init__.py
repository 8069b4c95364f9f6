"""Measuring one program: its allocation profile (profile), a littered heap (litter), cache
counts (cache), the alloclab-mem Valgrind tool (memtool) and the share of its instructions in
the allocator (memops). Every run goes through core.runner."""
