// The config explainer: reads a Hugging Face config.json in the reader's browser (no request
// leaves the page) and explains its attention in the page's language. Its data (keys, meanings,
// entries, models, strings, number format) is the JSON the page carries, rendered from the term
// base by termbase/site/explainer.py. A wrong input is one line in the page's language.
(function () {
  "use strict";
  const root = document.querySelector("[data-termbase-explainer]");
  if (!root) return;
  const data = JSON.parse(document.getElementById("termbase-explainer-data").textContent);
  const t = data.strings;
  const field = (id) => root.querySelector("#" + id);
  const text = field("explainer-json"), model = field("explainer-model");
  const dtype = field("explainer-dtype"), length = field("explainer-length");
  const out = field("explainer-output");

  const POSITIVE_INTEGERS = ["hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
    "num_hidden_layers", "attention_chunk_size", "kv_lora_rank", "qk_rope_head_dim",
    "full_attention_interval", "max_position_embeddings"];

  function esc(value) {
    return String(value).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c]));
  }
  // Numbers as the site writes them in this language (ui.yml: decimal and thousands separators,
  // and from how many digits the thousands are separated).
  function number(value) {
    const [whole, fraction] = String(value).split(".");
    const digits = whole.replace("-", "");
    let grouped = digits;
    if (digits.length >= data.number.thousands_from) {
      grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, data.number.thousands_separator);
    }
    return (whole.startsWith("-") ? "−" : "") + grouped + (fraction ? data.number.decimal_separator + fraction : "");
  }
  function bytes(value) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    const shown = unit === 0 ? String(value) : String(Math.round(value * 100) / 100);
    return number(shown) + "\u00a0" + units[unit];
  }
  function fail(message) {
    out.innerHTML = "<p class=\"termbase-explainer-error\" role=\"alert\">" + esc(message) + "</p>";
  }
  function wrong(key, expected) {
    return t.wrong_type.replace("{key}", key).replace("{value}", t[expected]);
  }

  // The keys under their standard names: GPT-2's n_head is num_attention_heads.
  function standard(config) {
    const merged = {};
    for (const [key, value] of Object.entries(config)) {
      const about = data.keys[key];
      merged[about && about.alias_of ? about.alias_of : key] = value;
    }
    return merged;
  }

  function check(c) {
    for (const key of POSITIVE_INTEGERS) {
      if (c[key] != null && !(Number.isInteger(c[key]) && c[key] > 0)) return wrong(key, "positive_integer");
    }
    if (c.sliding_window != null && !(Number.isInteger(c.sliding_window) && c.sliding_window > 0)) {
      return wrong("sliding_window", "positive_integer");
    }
    if (c.rope_theta != null && !(typeof c.rope_theta === "number" && c.rope_theta > 0)) {
      return wrong("rope_theta", "positive_number");
    }
    if (c.layer_types != null && !(Array.isArray(c.layer_types) && c.layer_types.every((k) => typeof k === "string"))) {
      return wrong("layer_types", "list_of_strings");
    }
    for (const key of ["rope_scaling", "rope_parameters", "text_config"]) {
      if (c[key] != null && (typeof c[key] !== "object" || Array.isArray(c[key]))) return wrong(key, "mapping");
    }
    return null;
  }

  // Layers by kind: layer_types when given, else Qwen3-Next's full_attention_interval, else all
  // layers one kind (full attention; with a window, which layers use it is the model's code's).
  function layerKinds(c) {
    const layers = c.num_hidden_layers;
    if (Array.isArray(c.layer_types)) {
      const kinds = {};
      for (const kind of c.layer_types) kinds[kind] = (kinds[kind] || 0) + 1;
      return kinds;
    }
    if (layers && c.full_attention_interval) {
      const full = Math.floor(layers / c.full_attention_interval);
      return {linear_attention: layers - full, full_attention: full};
    }
    return layers ? {full_attention: layers} : {};
  }

  function derive(c) {
    const rows = [];
    const h = c.num_attention_heads;
    const g = c.num_key_value_heads != null ? c.num_key_value_heads : h;
    const d = c.head_dim != null ? c.head_dim : (c.hidden_size && h ? c.hidden_size / h : null);
    rows.push([t.query_heads, h != null ? number(h) : t.missing]);
    rows.push([t.kv_heads, g != null ? number(g) : t.missing]);
    if (h && g) rows.push([t.groups, number(h / g)]);
    rows.push([t.head_width, d != null ? number(d) + (c.head_dim == null ? " (" + t.head_width_from + ")" : "") : t.missing]);
    rows.push([t.layers, c.num_hidden_layers != null ? number(c.num_hidden_layers) : t.missing]);
    const kinds = layerKinds(c);
    rows.push([t.layer_pattern, Object.entries(kinds).map(([kind, n]) => number(n) + " × <code>" + esc(kind) + "</code>").join(", ") || t.missing]);
    const theta = c.rope_theta != null ? c.rope_theta : (c.rope_parameters || {}).rope_theta;
    rows.push([t.rope_base, theta != null ? number(theta) : t.rope_default]);
    const scaling = c.rope_scaling || c.rope_parameters;
    const kind = scaling && (scaling.rope_type || scaling.type);
    rows.push([t.scaling, kind && kind !== "default" ? "<code>" + esc(kind) + "</code>" + (scaling.factor ? " × " + number(scaling.factor) : "") : t.none]);
    const window = c.use_sliding_window === false ? null : c.sliding_window;
    const windowNote = window && !Array.isArray(c.layer_types);
    rows.push([t.window, window ? (windowNote ? esc(t.window_unclear.replace("{value}", number(window))) : number(window)) : t.none_window]);

    const size = Number(dtype.value);
    const tokens = Math.max(1, Math.floor(Number(length.value) || 1));
    let perLayer = null, formula = t.kv_formula;
    if (c.kv_lora_rank) {
      perLayer = (c.kv_lora_rank + (c.qk_rope_head_dim || 0)) * size;
      formula = t.kv_formula_mla;
    } else if (g && d) {
      perLayer = 2 * g * d * size;
    }
    if (perLayer != null && c.num_hidden_layers) {
      // Layers whose cache grows with the sequence: full, sliding (up to the window) and chunked
      // (up to the chunk); linear-attention layers keep a state of fixed size instead.
      const full = (kinds.full_attention || 0) + (kinds.attention || 0);
      const sliding = kinds.sliding_attention || 0, chunked = kinds.chunked_attention || 0;
      const growing = full + sliding + chunked;
      const perToken = perLayer * growing;
      const perSequence = perLayer * (full * tokens + sliding * Math.min(tokens, c.sliding_window || tokens)
        + chunked * Math.min(tokens, c.attention_chunk_size || tokens));
      const bound = windowNote ? " (" + esc(t.kv_upper_bound) + ")" : "";
      rows.push([t.kv_token, "<span data-kv-token=\"" + perToken + "\">" + bytes(perToken) + "</span> = <code>" + esc(formula) + "</code>" + bound]);
      rows.push([t.kv_sequence, "<span data-kv-sequence=\"" + perSequence + "\">" + bytes(perSequence) + "</span> (" + number(tokens) + " tokens)" + bound]);
    }
    return rows;
  }

  function explain() {
    if (!text.value.trim()) { fail(t.empty); return; }
    let config;
    try {
      config = JSON.parse(text.value);
    } catch (error) {
      fail(t.invalid_json.replace("{error}", error.message));
      return;
    }
    if (!config || typeof config !== "object" || Array.isArray(config)) { fail(t.not_object); return; }
    const problem = check(config) || check(config.text_config || {});
    if (problem) { fail(problem); return; }
    const nested = config.text_config && typeof config.text_config === "object";
    const c = standard(Object.assign({}, config, nested ? config.text_config : {}));
    const known = [], unknown = [];
    for (const [key, value] of Object.entries(Object.assign({}, config, nested ? config.text_config : {}))) {
      if (key === "text_config") continue;
      (data.keys[key] ? known : unknown).push([key, value]);
    }
    let html = nested ? "<p>" + esc(t.text_config) + "</p>" : "";
    html += "<h3>" + esc(t.derived) + "</h3><table><tbody>";
    for (const [label, value] of derive(c)) html += "<tr><th scope=\"row\">" + esc(label) + "</th><td>" + value + "</td></tr>";
    html += "</tbody></table><h3>" + esc(t.known) + "</h3><table><thead><tr><th>" + esc(t.key) + "</th><th>" + esc(t.value)
      + "</th><th></th></tr></thead><tbody>";
    for (const [key, value] of known) {
      const about = data.keys[key];
      html += "<tr><td><code>" + esc(key) + "</code></td><td><code>" + esc(JSON.stringify(value)) + "</code></td><td>"
        + esc(about.meaning.replace(/`/g, "")) + " <a href=\"" + esc(about.entry) + "\">" + esc(about.name) + "</a></td></tr>";
    }
    html += "</tbody></table><h3>" + esc(t.unknown) + "</h3><p class=\"termbase-explainer-unknown\">"
      + (unknown.map(([key]) => "<code>" + esc(key) + "</code>").join(", ") || "—") + "</p>";
    out.innerHTML = html;
  }

  model.addEventListener("change", () => {
    if (!model.value) return;
    text.value = JSON.stringify(data.models[model.value].config, null, 2);
    explain();
  });
  field("explainer-run").addEventListener("click", explain);
  dtype.addEventListener("change", () => { if (text.value.trim()) explain(); });
  length.addEventListener("change", () => { if (text.value.trim()) explain(); });
})();
