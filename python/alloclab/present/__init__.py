"""Rendering, with no statistics: Markdown tables (tables), plots (plots: the one place
matplotlib loads) and the HTML report layer (html, templates/)."""
