"""The results model: every file the lab writes and reads again, each with its format_version,
its dataclasses, its one writer and its one reader (files.py: what they share; runs.py:
results.csv; summary.py: summary.json; profile.py: profile JSON; findings.py: the study's
findings.json and verdicts.json; documents.py: drag, frag, pages and ablation JSON)."""
