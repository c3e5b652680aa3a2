"""The executors: what runs code (notebooks, the code blocks of pages), and their one cache."""
