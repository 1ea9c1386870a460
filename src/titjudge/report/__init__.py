"""Tables (Markdown, CSV, LaTeX), plots and the HTML audit page."""
