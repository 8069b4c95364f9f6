"""The ablation of vam's design switches: switches.py (the settings), plan.py (the programs),
run.py (running them), summary.py (ratios and paired verdicts), report.py (ablation.md)."""
