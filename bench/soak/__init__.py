"""The soak bench: a week of production compressed into minutes (see run.py)."""
