"""A comparison: plan.py (what runs), run.py (running it, results.csv as it goes),
summary.py (statistics and warnings), text.py (tables and the headline), report.py (plots and
the HTML page), files.py (the exports)."""
