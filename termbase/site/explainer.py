"""`{{ config_explainer }}`: the config explainer's form, and the data its script reads, in the
page's language. Everything runs in the reader's browser (docs/assets/javascripts/
config-explainer.js): no request leaves the page, so it works offline and without the build.

The data comes from its one home in the term base: the keys and their meanings from
termbase/data/config_keys.yml (the models page's key index reads the same file), the models'
config.json files from termbase/data/model_configs.yml, the strings from ui.yml's `explainer`."""

from __future__ import annotations

import html
import json

from termbase.core.model import TermBase, read_yaml

DTYPES = (("bfloat16", 2), ("float16", 2), ("float32", 4), ("float8_e4m3fn", 1))


def _data(base: TermBase, lang: str, glossary: str) -> dict:
    data_dir = base.project.data_dir
    keys = base.config_keys
    models = read_yaml(data_dir / "model_configs.yml") or {}
    names = {model["id"]: model["name"] for model in
             (read_yaml(data_dir / "models.yml") or {}).get("models") or []}
    return {
        "locale": {"en": "en-US", "es": "es-ES", "da": "da-DK"}.get(lang, lang),
        "strings": {key: value[lang] for key, value in base.ui["explainer"].items()},
        "number": {"decimal_separator": base.t("decimal_separator", lang),
                   "thousands_separator": base.t("thousands_separator", lang),
                   "thousands_from": int(base.t("thousands_from", lang))},
        "keys": {key: {"meaning": about[lang], "alias_of": about.get("alias_of"),
                       "entry": glossary + about["entry"] + "/", "name": base.name(about["entry"], lang)}
                 for key, about in keys.items()},
        "models": {model_id: {"name": names.get(model_id, model_id), "config": about["config"]}
                   for model_id, about in models.items()},
    }


def config_explainer(base: TermBase, lang: str, src_uri: str) -> str:
    depth = src_uri.count("/") + 1  # the page is served as <page>/index.html
    up = "../" * depth
    data = _data(base, lang, up + "glossary/")
    t = data["strings"]
    options = "".join(f'<option value="{html.escape(model_id)}">{html.escape(about["name"])}</option>'
                      for model_id, about in data["models"].items())
    dtypes = "".join(f'<option value="{size}">{name}</option>' for name, size in DTYPES)
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return f"""<div class="termbase-explainer" data-termbase-explainer>
<p><label for="explainer-model">{html.escape(t["pick"])}</label><br>
<select id="explainer-model"><option value="">{html.escape(t["pick_none"])}</option>{options}</select></p>
<p><label for="explainer-json">{html.escape(t["paste"])}</label><br>
<textarea id="explainer-json" rows="12" spellcheck="false" autocomplete="off"></textarea></p>
<p><label for="explainer-dtype">{html.escape(t["dtype"])}</label>
<select id="explainer-dtype">{dtypes}</select>
<label for="explainer-length">{html.escape(t["length"])}</label>
<input id="explainer-length" type="number" min="1" step="1" value="8192">
<button type="button" id="explainer-run" class="md-button">{html.escape(t["explain"])}</button></p>
<div id="explainer-output" aria-live="polite"></div>
</div>
<script type="application/json" id="termbase-explainer-data">{payload}</script>
<script src="{up}assets/javascripts/config-explainer.js"></script>
"""
