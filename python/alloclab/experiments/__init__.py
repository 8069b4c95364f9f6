"""The experiments, each a plan, a run and its results: compare/ (allocators x littering
levels), drag, frag, pages, ablation/ (vam's design switches), study/ (the papers' claims),
and the catalog of bundled workloads (workloads)."""
