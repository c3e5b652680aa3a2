"""`{{ style_guide }}`: a language's style guide, rendered from termbase/data/style/<lang>.yml,
the same file the checker enforces, so the page and the check can never disagree."""

from __future__ import annotations

from termbase.core.check.wording import shown
from termbase.core.model import TermBase


def _cell(text) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ").strip()


def style_guide(base: TermBase, lang: str) -> str:
    style = base.style(lang)
    if not style:
        return base.t("no_style_guide", lang, "page")
    heading = base.ui["style_headings"]
    out = []
    for key in ("intro", "register"):
        if style.get(key):
            if key != "intro":
                out.append(f"## {heading[key][lang]}\n")
            out.append(str(style[key]).strip() + "\n")
    if style.get("kept_english"):
        out.append(f"## {heading['kept_english'][lang]}\n")
        out.append(f"| {heading['term'][lang]} | {heading['forms'][lang]} | {heading['note'][lang]} |\n|---|---|---|")
        for item in style["kept_english"]:
            forms = ", ".join(f"*{form}*" for form in item.get("forms") or [])
            articles = (style.get("articles") or {}).get(item.get("gender")) or []
            if articles:  # the gender, shown by its articles ("el, un"; "en")
                forms += f" ({', '.join(dict.fromkeys(articles[:2]))})"
            out.append(f"| **{_cell(item.get('term'))}** | {forms} | {_cell(item.get('note'))} |")
        out.append("")
    if style.get("renderings"):
        out.append(f"## {heading['renderings'][lang]}\n")
        out.append(f"| {heading['concept'][lang]} | {heading['write'][lang]} | {heading['avoid'][lang]} | "
                   f"{heading['note'][lang]} |\n|---|---|---|---|")
        for item in style["renderings"]:
            avoided = []
            for form in item.get("avoid") or []:
                phrase = next(iter(form)) if isinstance(form, dict) else str(form).split(": ", 1)[0]
                avoided.append(f"~~{_cell(shown(str(phrase)))}~~")
            out.append(f"| {_cell(item.get('concept'))} | **{_cell(item.get('write'))}** | {', '.join(avoided)} | "
                       f"{_cell(item.get('note'))} |")
        out.append("")
    if style.get("typography"):
        out.append(f"## {heading['typography'][lang]}\n")
        out += [f"- {str(rule.get('rule', '')).strip()}" for rule in style["typography"] if isinstance(rule, dict)]
        out.append("")
    for key in ("examples", "translation"):
        if style.get(key):
            out.append(f"## {heading[key][lang]}\n")
            out.append(str(style[key]).strip() + "\n")
    return "\n".join(out)
