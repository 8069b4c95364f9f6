"""The study, plan -> run -> verdicts -> report: plan.py and programs.py (what runs),
run.py and instruments.py (running it), analysis.py and verdicts/ (tables and the papers'
claims judged), report.py, sections.py, ablation_section.py, blocks.py and text.py (the page
and the text), outputs.py (its files, and the report drawn again)."""
