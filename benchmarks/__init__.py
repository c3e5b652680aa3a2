"""Speed benchmarks of the site: builds (against Zensical and plain MkDocs), `mkdocs serve`
edit-to-visible, the test suite, page weight and the attention snippets.
Run `python -m benchmarks` (or `--quick`); see benchmarks/RESULTS.md."""
