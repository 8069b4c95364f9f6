"""The study's verdicts: the rules (rules.py), the data they read (data.py) and the papers'
claims measured on it (claims.py)."""
