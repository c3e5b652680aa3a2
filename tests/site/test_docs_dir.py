"""The pages' folder is mkdocs.yml's `docs_dir` (MkDocs' default `docs`), not a literal."""

from termbase.core.project import load

MKDOCS = "site_name: x\n{docs_dir}plugins:\n  - termbase:\n      languages: [en]\n"


def test_the_docs_folder_comes_from_docs_dir(tmp_path):
    (tmp_path / "mkdocs.yml").write_text(MKDOCS.format(docs_dir="docs_dir: content\n"), encoding="utf-8")
    assert load(tmp_path).docs == (tmp_path / "content").resolve()


def test_without_docs_dir_it_is_docs(tmp_path):
    (tmp_path / "mkdocs.yml").write_text(MKDOCS.format(docs_dir=""), encoding="utf-8")
    assert load(tmp_path).docs == (tmp_path / "docs").resolve()
