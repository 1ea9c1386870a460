"""The pair-by-pair audit: load a run dir, show it in the terminal or as one HTML page."""
