"""The models page's data (termbase/data/models.yml), the config keys it indexes
(config_keys.yml) and the config.json files the config explainer offers (model_configs.yml)."""

from __future__ import annotations

import re

from termbase.core.check import yamlfile
from termbase.core.check.records import did_you_mean
from termbase.core.markdown import SLUG
from termbase.core.model import TermBase


# The models page shows them in two tables (termbase/site/model_table.py): the heads and positions,
# then the layer kinds and the additions of recent years.
MODEL_GROUPS = (("attention", "query_heads", "kv_heads", "head_dim", "positions", "rope_theta", "rope_scaling",
                 "partial_rotary"),
                ("layer_pattern", "sliding_window", "soft_capping", "qk_norm", "sinks", "output_gate",
                 "score_scale"))
MODEL_COLUMNS = tuple(column for group in MODEL_GROUPS for column in group)
# `layer_types` as a ratio: "3 linear : 1 full", "5 sliding : 1 full" (the kinds of Hugging Face's
# layer_types without "_attention"); none = every layer the same kind.
LAYER_KINDS = ("linear", "full", "sliding", "chunked")
LAYER_PATTERN = re.compile(r"[1-9]\d* (?:%s)(?: : [1-9]\d* (?:%s))+" % ("|".join(LAYER_KINDS), "|".join(LAYER_KINDS)))
ROPE_TYPES = ("linear", "dynamic", "yarn", "llama3", "longrope")
# The factor multiplying q.k where it is not 1/sqrt(d_k): "1", "1/√168", "1.874/√192".
SCORE_SCALE = re.compile(r"\d+(?:\.\d+)?(?:/√\d+)?")
PARTIAL_ROTARY = re.compile(r"([1-9]\d*)/([1-9]\d*)")
WORD_VALUES = {"score_scale": ("grows-with-position",)}


def _model_value_problem(column: str, cell: dict) -> tuple[str, str] | None:
    """(problem, fix) for a value that breaks its column's grammar; None when it is well formed."""
    value = cell.get("value")
    if value is None or value == "none" or value in WORD_VALUES.get(column, ()):
        return None
    if column in ("sinks", "output_gate", "qk_norm") and not isinstance(value, bool):
        return f"is '{value}', not true or false", "write true, false, or null (not published)"
    if column == "layer_pattern" and not (isinstance(value, str) and LAYER_PATTERN.fullmatch(value)):
        return (f"is '{value}', not a ratio of layer kinds",
                f"write it as `3 linear : 1 full` (kinds: {', '.join(LAYER_KINDS)}), or none for one kind")
    if column == "rope_scaling":
        if value not in ROPE_TYPES:
            return f"is '{value}', not a rope_type", f"write one of {', '.join(ROPE_TYPES)}, or none"
        factor = cell.get("factor")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 1:
            return f"'{value}' has no `factor` greater than 1", "add `factor: <number>` as the configuration gives it"
    if column == "partial_rotary":
        match = PARTIAL_ROTARY.fullmatch(str(value))
        ok = (isinstance(value, float) and 0 < value < 1) or (match and int(match[1]) < int(match[2]))
        if not ok:
            return (f"is '{value}', not a share of the head below 1",
                    "write partial_rotary_factor (0.25) or rotated/total dimensions (64/192), or none")
    if column == "score_scale" and not (isinstance(value, str) and SCORE_SCALE.fullmatch(value)):
        return (f"is '{value}', not a factor", "write it as `1`, `1/√168` or `1.874/√192` (in quotes), "
                "or none where it is 1/√d_k")
    return None


def check_models(base: TermBase, report) -> None:
    """termbase/data/models.yml: every model names existing entries, and every value has a source."""
    path = base.project.data_dir / "models.yml"
    if not path.is_file():
        return
    data, lines = yamlfile.load(path, report)
    models = (data or {}).get("models") if isinstance(data, dict) else None
    if data is not None and not isinstance(models, list):
        report.add(path, 1, "no list of models", "write `models:` followed by one `- id: ...` mapping per model")
        return
    terms, sources = base.terms, base.sources or {}
    for index, model in enumerate(models or []):
        def at(*keys):
            return yamlfile.line_of(lines, ("models", index, *keys))

        if not isinstance(model, dict) or not SLUG.fullmatch(str(model.get("id", ""))) or not model.get("name"):
            report.add(path, at(), f"model {index + 1} needs an `id` (lowercase-with-hyphens) and a `name`",
                       "add them as the publisher writes the name")
            continue
        for n, slug in enumerate(model.get("entries") or []):
            if slug not in terms:
                report.add(path, at("entries", n), f"model '{model['id']}' links to entry '{slug}', which does not exist",
                           did_you_mean(slug, terms))
        for column in MODEL_COLUMNS:
            cell = model.get(column)
            if not isinstance(cell, dict) or "value" not in cell:
                report.add(path, at(column) if column in model else at(), f"model '{model['id']}' has no `{column}`",
                           f"write `{column}: {{value: ..., source: ...}}` (value null when not published)")
                continue
            value, source = cell.get("value"), cell.get("source")
            if value is not None and source not in sources:
                report.add(path, at(column), f"`{column}` of '{model['id']}' has no known source ('{source}')",
                           "name an id of termbase/data/sources.yml, or write `value: null` (not published)")
            problem = _model_value_problem(column, cell)
            if problem:
                report.add(path, at(column), f"`{column}` of '{model['id']}' {problem[0]}", problem[1])
            if column == "positions" and value not in (None, "none", "learned-absolute") and value not in terms:
                report.add(path, at(column), f"positions of '{model['id']}' is '{value}', not an entry",
                           "use the slug of a position entry (e.g. rotary-position-embedding) or learned-absolute")


def check_config_keys(base: TermBase, report) -> None:
    """termbase/data/config_keys.yml: every key names an existing entry and says what it means in
    every language (the models page's key index and the config explainer read it)."""
    path = base.project.data_dir / "config_keys.yml"
    if not path.is_file():
        return
    data, lines = yamlfile.load(path, report)
    keys = (data or {}).get("keys") if isinstance(data, dict) else None
    if data is not None and not isinstance(keys, dict):
        report.add(path, 1, "no mapping of keys", "write `keys:` followed by one `<config key>:` mapping per key")
        return
    for key, about in (keys or {}).items():
        line = yamlfile.line_of(lines, ("keys", key))
        if not isinstance(about, dict):
            report.add(path, line, f"key '{key}' says nothing", "give it `entry:` and one line per language")
            continue
        if about.get("entry") not in base.terms:
            report.add(path, yamlfile.line_of(lines, ("keys", key, "entry")),
                       f"key '{key}' points to entry '{about.get('entry')}', which does not exist",
                       did_you_mean(str(about.get("entry")), base.terms))
        for lang in base.languages:
            if not str(about.get(lang) or "").strip():
                report.add(path, line, f"key '{key}' has no '{lang}' line", f"add `{lang}: ...`: what the key means")
        if about.get("alias_of") is not None and about["alias_of"] not in keys:
            report.add(path, yamlfile.line_of(lines, ("keys", key, "alias_of")),
                       f"key '{key}' is an alias of '{about['alias_of']}', which is not a key here",
                       "add that key, or name one of the keys of this file")


def check_model_configs(base: TermBase, report) -> None:
    """termbase/data/model_configs.yml: the config.json of models of the models page, each with
    its source (the config explainer offers them)."""
    path = base.project.data_dir / "model_configs.yml"
    if not path.is_file():
        return
    data, lines = yamlfile.load(path, report)
    models_path = base.project.data_dir / "models.yml"
    models = (yamlfile.load(models_path, report)[0] or {}).get("models") or [] if models_path.is_file() else []
    ids = {str(model.get("id")) for model in models if isinstance(model, dict)}
    for model_id, about in (data or {}).items() if isinstance(data, dict) else ():
        line = yamlfile.line_of(lines, (model_id,))
        if model_id not in ids:
            report.add(path, line, f"model '{model_id}' is not on the models page", did_you_mean(model_id, ids))
        if not isinstance(about, dict) or not isinstance(about.get("config"), dict):
            report.add(path, line, f"model '{model_id}' has no `config`", "copy its config.json under `config:`")
        elif about.get("source") not in (base.sources or {}):
            report.add(path, line, f"model '{model_id}' has no source in sources.yml",
                       "write `source: <id>` of the config.json it was copied from")
