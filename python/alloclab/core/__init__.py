"""The lab's ground floor: where the native parts are (paths), the allocator registry
(allocators), littering levels and cells (levels), the one process runner with the one
LD_PRELOAD launch path (runner), progress lines, the machine, and the results model
(results/: a dataclass per row kind, one reader and one writer per file format)."""
