"""The config explainer as a reader uses it, in every language: each model of the models page
that the site ships a config.json for is explained with the values that follow from it (checked
against the formula computed here, another way); a nested text_config is read; wrong input is one
line in the page's language; nothing leaves the page (Reader.watch fails on any other host)."""

import json

import pytest

from termbase.core.model import TermBase, read_yaml
from tests.browser import a11ytools as a11y
from tests.browser.test_reading import prefix
from tests.site.sitetools import LANGS, PROJECT

pytestmark = pytest.mark.browser
BASE = TermBase(PROJECT)
MODELS = read_yaml(PROJECT.data_dir / "model_configs.yml")
PAGE = "config-explainer/"


def expected_kv_bytes_per_token(config: dict, size: int) -> int:
    """2 x layers x G x d_k x bytes, from the keys as each family names them."""
    heads = config.get("num_attention_heads", config.get("n_head"))
    kv_heads = config.get("num_key_value_heads", heads)
    width = config.get("head_dim") or config.get("hidden_size", config.get("n_embd")) // heads
    layers = config.get("num_hidden_layers", config.get("n_layer"))
    return 2 * layers * kv_heads * width * size


def explained(page, text: str) -> None:
    page.fill("#explainer-json", text)
    page.click("#explainer-run")


@pytest.mark.parametrize("lang", LANGS)
def test_every_model_is_explained_with_its_values(reader, page, lang):
    with reader.watch("config explainer"):
        reader.goto(prefix(lang) + PAGE)
        page.select_option("#explainer-dtype", label="bfloat16")
        for model_id, about in MODELS.items():
            page.select_option("#explainer-model", model_id)
            token = page.locator("[data-kv-token]")
            assert token.count() == 1, model_id
            assert int(token.get_attribute("data-kv-token")) == expected_kv_bytes_per_token(about["config"], 2), model_id
            text = page.inner_text("#explainer-output")
            heads = about["config"].get("num_attention_heads", about["config"].get("n_head"))
            assert BASE.number(heads, lang) in text
            # Every key is listed once: explained (with a link to its entry) or named as unknown.
            links = page.locator("#explainer-output td a[href*='glossary/']")
            assert links.count() >= 3, model_id
            for key in about["config"]:
                assert f"{key}" in text, f"{model_id}: {key} is not listed"
        # The same cache in float32 is twice as large.
        page.select_option("#explainer-model", "llama-2-70b")
        page.select_option("#explainer-dtype", label="float32")
        assert int(page.get_attribute("[data-kv-token]", "data-kv-token")) == 2 * 327_680


@pytest.mark.parametrize("lang", LANGS)
def test_a_nested_text_config_is_read(reader, page, lang):
    with reader.watch("config explainer, text_config"):
        reader.goto(prefix(lang) + PAGE)
        qwen = MODELS["qwen3-8b"]["config"]
        explained(page, json.dumps({"model_type": "example_vl", "text_config": qwen,
                                    "vision_config": {"hidden_size": 1024}}))
        assert BASE.ui["explainer"]["text_config"][lang] in page.inner_text("#explainer-output")
        assert int(page.get_attribute("[data-kv-token]", "data-kv-token")) == expected_kv_bytes_per_token(qwen, 2)
        # The tables the explainer writes get scroll shadows only if they scroll, as the page's own do.
        assert page.locator("#explainer-output table").count() == 2
        shadows = page.evaluate(a11y.SCROLL_AFFORDANCE)
        assert not shadows["problems"], shadows["problems"]


@pytest.mark.parametrize("lang", LANGS)
def test_wrong_input_is_one_line_in_the_page_language(reader, page, lang):
    strings = BASE.ui["explainer"]
    cases = [
        ("{\"hidden_size\": 4096,", strings["invalid_json"][lang].split("{error}")[0]),
        ("[1, 2]", strings["not_object"][lang]),
        ("", strings["empty"][lang]),
        ("{\"num_attention_heads\": \"32\"}", strings["wrong_type"][lang].replace("{key}", "num_attention_heads")
         .replace("{value}", strings["positive_integer"][lang])),
        ("{\"layer_types\": \"full_attention\"}", strings["wrong_type"][lang].replace("{key}", "layer_types")
         .replace("{value}", strings["list_of_strings"][lang])),
    ]
    with reader.watch("config explainer, wrong input"):
        reader.goto(prefix(lang) + PAGE)
        for text, message in cases:
            explained(page, text)
            alert = page.locator("#explainer-output [role=alert]")
            assert alert.count() == 1, text
            assert alert.inner_text().startswith(message.strip()), (text, alert.inner_text())
            assert "\n" not in alert.inner_text().strip()
