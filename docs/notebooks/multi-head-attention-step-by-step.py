# %% [markdown] lang="en"
# # Multi-head attention step by step
#
# This notebook opens up one call of multi-head attention and runs its steps one at a time:
# the projections, the split into heads, the scores, the softmax, the weighted sum of the
# values, the concatenation and the output projection, printing the shape of every tensor on
# the way. The heatmaps show each head's attention weights, and the last cells check that the
# steps give exactly what the module computes in one call, and what PyTorch's
# `torch.nn.MultiheadAttention` computes with the same weights.
#
# The code is the site's own, from the glossary entry on multi-head attention. The weights are
# random (nothing is trained), so the patterns in the heatmaps mean nothing yet: the shapes and
# the mechanics are the point. Shapes are written `(B, T, d_model)`: batch, tokens, model width.

# %% [markdown] lang="es"
# # Atención multicabeza paso a paso
#
# Este cuaderno desmonta una llamada a la atención multicabeza y ejecuta sus pasos uno a uno: las
# proyecciones, la división en cabezas, las puntuaciones, el softmax, la suma ponderada de los
# valores, la concatenación y la proyección de salida, e imprime sobre la marcha la forma de cada
# tensor. Los mapas de calor muestran los pesos de atención de cada cabeza, y las últimas celdas
# comprueban que los pasos dan exactamente lo mismo que el módulo en una sola llamada y que
# `torch.nn.MultiheadAttention` de PyTorch con los mismos pesos.
#
# El código es el del propio sitio, tomado de la entrada del glosario sobre la atención multicabeza.
# Los pesos son aleatorios (no se entrena nada), de modo que los patrones de los mapas de calor
# todavía no significan nada: lo importante son las formas y el mecanismo. Las formas se escriben
# `(B, T, d_model)`: lote, tokens, ancho del modelo.

# %% [markdown] lang="da"
# # Multi-head attention trin for trin
#
# Denne notebook skiller ét kald af multi-head attention ad og kører trinnene ét ad gangen:
# projektionerne, opdelingen i hoveder, scorerne, softmax, den vægtede sum af værdierne,
# sammenkædningen og outputprojektionen, og den udskriver formen på hver tensor undervejs.
# Heatmappene viser hvert hoveds attention-vægte, og de sidste celler kontrollerer, at trinnene giver
# nøjagtig det, modulet beregner i ét kald, og det, PyTorchs `torch.nn.MultiheadAttention` beregner
# med de samme parametre.
#
# Koden er sitets egen, fra ordlisteopslaget om multi-head attention. Parametrene er tilfældige
# (her trænes intet), så mønstrene i heatmappene betyder endnu ingenting: det er formerne og
# mekanikken, der er pointen. Former skrives `(B, T, d_model)`: batch, tokens, modellens bredde.

# %%
# --8<-- "snippets/scaled_dot_product_attention.py:code"
# --8<-- "snippets/multi_head_attention.py:code"

# %% [markdown] lang="en"
# A small helper draws one heatmap per head: a row per query token, a column per key token, and
# in each cell the weight that query gives that key.

# %% [markdown] lang="es"
# Una pequeña función auxiliar dibuja un mapa de calor por cabeza: una fila por token de consulta,
# una columna por token de clave y, en cada celda, el peso que esa consulta da a esa clave.

# %% [markdown] lang="da"
# En lille hjælpefunktion tegner ét heatmap pr. hoved: en række pr. forespørgsels-token, en søjle
# pr. nøgle-token og i hver celle den vægt, som forespørgslen lægger på nøglen.

# %%
# --8<-- "docs/notebooks/_heatmaps.py:code"

# %% [markdown] lang="en"
# ## The input
#
# One sentence of six tokens (a batch of one), a model width of 16 and four heads, so each head
# works in `d_k = 16 / 4 = 4` dimensions. Random vectors stand in for the token embeddings.

# %% [markdown] lang="es"
# ## La entrada
#
# Se usa una oración de seis tokens (un lote de tamaño 1), un ancho de modelo de 16 y cuatro
# cabezas, de modo que cada cabeza trabaja con un ancho `d_k = 16 / 4 = 4`. Unos vectores aleatorios hacen las
# veces de embeddings de los tokens.

# %% [markdown] lang="da"
# ## Inputtet
#
# Én sætning på seks tokens (et batch på én), en modelbredde på 16 og fire hoveder, så hvert
# hoved arbejder i `d_k = 16 / 4 = 4` dimensioner. Tilfældige vektorer står i stedet for
# egentlige token-embeddings.

# %%
torch.manual_seed(0)
tokens = ["the", "cat", "sat", "on", "the", "mat"]
d_model, num_heads = 16, 4
mha = MultiHeadAttention(d_model, num_heads).eval()
# (B, T, d_model): one vector per token
x = torch.randn(1, len(tokens), d_model)
print("x:", tuple(x.shape), "  d_k =", mha.d_k)

# %% [markdown] lang="en"
# ## 1. Projections
#
# In self-attention the queries, keys and values all come from `x`, each through its own learned
# linear map `W^Q`, `W^K`, `W^V`. One `nn.Linear(d_model, d_model)` per role holds all four heads
# at once, so the shapes do not change yet.

# %% [markdown] lang="es"
# ## 1. Proyecciones
#
# En la autoatención, las consultas, las claves y los valores salen todos de `x`, cada uno a través
# de su propia transformación lineal aprendida: `W^Q`, `W^K` y `W^V`. Una sola
# `nn.Linear(d_model, d_model)` para cada rol abarca las cuatro cabezas a la vez, por lo que las
# formas todavía no cambian.

# %% [markdown] lang="da"
# ## 1. Projektioner
#
# I self-attention kommer forespørgsler, nøgler og værdier alle fra `x`, hver gennem sin egen
# lærte lineære afbildning `W^Q`, `W^K`, `W^V`. Ét `nn.Linear(d_model, d_model)` pr. rolle rummer
# alle fire hoveder på én gang, så formerne ændrer sig ikke endnu.

# %%
q = mha.w_q(x)  # (B, T, d_model)
k = mha.w_k(x)  # (B, T, d_model)
v = mha.w_v(x)  # (B, T, d_model)
print("q:", tuple(q.shape), " k:", tuple(k.shape), " v:", tuple(v.shape))

# %% [markdown] lang="en"
# ## 2. Split into heads
#
# `split_heads` views the last dimension as `(h, d_k)` and moves the head dimension forward:
# `(B, T, d_model)` → `(B, T, h, d_k)` → `(B, h, T, d_k)`. Heads count from 1 and tensor indices
# from 0: head *i* is index `i − 1` on the head axis and gets the features at indices
# `(i−1)·d_k … i·d_k − 1` of every token; nothing is copied or mixed.

# %% [markdown] lang="es"
# ## 2. División en cabezas
#
# `split_heads` reinterpreta el último eje como `(h, d_k)` y adelanta la dimensión de las
# cabezas: `(B, T, d_model)` → `(B, T, h, d_k)` → `(B, h, T, d_k)`. Las cabezas se cuentan desde
# 1 y los índices de los tensores desde 0: la cabeza *i* es el índice `i − 1` del eje de las
# cabezas y recibe las componentes de índices `(i−1)·d_k … i·d_k − 1` de cada token; no se copia
# ni se mezcla nada.

# %% [markdown] lang="da"
# ## 2. Opdeling i hoveder
#
# `split_heads` læser den sidste dimension som `(h, d_k)` og flytter hovedernes akse frem:
# `(B, T, d_model)` → `(B, T, h, d_k)` → `(B, h, T, d_k)`. Hovederne tælles fra 1 og tensorernes
# indekser fra 0: hoved *i* er indeks `i − 1` på hovedernes akse og får hvert tokens features med
# indekserne `(i−1)·d_k … i·d_k − 1`; intet kopieres eller blandes.

# %%
q_heads = mha.split_heads(q)  # (B, h, T, d_k)
k_heads = mha.split_heads(k)
v_heads = mha.split_heads(v)
print("q_heads:", tuple(q_heads.shape))
head = 2  # heads count from 1: head 2 is index 1 on the head axis
features = slice((head - 1) * mha.d_k, head * mha.d_k)  # indices 4..7
same = torch.equal(q_heads[:, head - 1], q[:, :, features])
span = f"{features.start}..{features.stop - 1}"
print(f"head {head} (index {head - 1}) holds features {span} of q:", same)
assert same

# %% [markdown] lang="en"
# ## 3. Scores
#
# Each head compares every query with every key: `q k^T / sqrt(d_k)`. The `T × T` score matrix
# exists once per head, hence `(B, h, T, T)`. Dividing by `sqrt(d_k)` keeps the scores near unit
# variance when the components of queries and keys are independent with variance about 1, so the
# softmax that follows does not saturate. The random, untrained weights here give smaller scores
# still, so the maps below are close to uniform.

# %% [markdown] lang="es"
# ## 3. Puntuaciones
#
# Cada cabeza compara cada consulta con cada clave: `q k^T / sqrt(d_k)`. La matriz de puntuaciones
# de `T × T` existe una vez por cabeza, de ahí `(B, h, T, T)`. Si las componentes de las consultas
# y de las claves son independientes y tienen una varianza de alrededor de 1, dividir por
# `sqrt(d_k)` mantiene la varianza de las puntuaciones cerca de 1, y así el softmax que viene a
# continuación no se satura. Los pesos aleatorios de este ejemplo, sin entrenar, dan puntuaciones
# aún menores, de modo que los mapas que siguen son casi uniformes.

# %% [markdown] lang="da"
# ## 3. Scorer
#
# Hvert hoved sammenligner hver forespørgsel med hver nøgle: `q k^T / sqrt(d_k)`. Scorematricen på
# `T × T` findes én gang pr. hoved, deraf `(B, h, T, T)`. Hvis forespørgslernes og nøglernes
# features er uafhængige med en varians på omkring 1, holder divisionen med `sqrt(d_k)` scorernes
# varians tæt på 1, så den efterfølgende softmax ikke går i mætning. De tilfældige, utrænede
# parametre her giver endnu mindre scorer, så rækkerne i heatmappene nedenfor er tæt på en
# ligefordeling.

# %%
# (B, h, T, T)
scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(mha.d_k)
print("scores:", tuple(scores.shape))

# %% [markdown] lang="en"
# ## 4. Softmax
#
# The softmax runs over the keys, the last dimension: each row becomes weights that are positive
# and sum to 1. One heatmap per head: row = query token, column = key token.

# %% [markdown] lang="es"
# ## 4. Softmax
#
# El softmax se aplica sobre las claves, el último eje: cada fila se convierte en pesos
# positivos que suman 1. Un mapa de calor por cabeza: fila = token de consulta, columna = token de
# clave.

# %% [markdown] lang="da"
# ## 4. Softmax
#
# Softmax beregnes over nøglerne, den sidste dimension: hver række bliver til positive vægte, der
# summerer til 1. Ét heatmap pr. hoved: række = forespørgsels-token, søjle = nøgle-token.

# %% alt={"en": "Four heatmaps, one per head, of the 6 by 6 attention weights of the sentence 'the cat sat on the mat'; each row sums to 1.", "es": "Cuatro mapas de calor, uno por cabeza, con los pesos de atención de 6 por 6 de la oración «the cat sat on the mat»; cada fila suma 1.", "da": "Fire heatmaps, ét pr. hoved, med de 6 × 6 attention-vægte for sætningen \"the cat sat on the mat\"; hver række summerer til 1."}
weights = torch.softmax(scores, dim=-1)  # (B, h, T, T)
ones = torch.ones(1, num_heads, len(tokens))
rows_sum_to_one = torch.allclose(weights.sum(dim=-1), ones)
print("weights:", tuple(weights.shape), "  rows sum to 1:", rows_sum_to_one)
assert rows_sum_to_one
plot_heads(weights[0], tokens, tokens)

# %% [markdown] lang="en"
# ## 5. Weighted sum of the values
#
# Each head mixes its value vectors with its weights: `(B, h, T, T) @ (B, h, T, d_k)` →
# `(B, h, T, d_k)`. Steps 3 to 5 are exactly scaled dot-product attention, run on all heads at once.

# %% [markdown] lang="es"
# ## 5. Suma ponderada de los valores
#
# Cada cabeza mezcla sus vectores de valor con sus pesos: `(B, h, T, T) @ (B, h, T, d_k)` →
# `(B, h, T, d_k)`. Los pasos 3 a 5 son exactamente la atención por producto escalar escalado,
# aplicada a todas las cabezas a la vez.

# %% [markdown] lang="da"
# ## 5. Vægtet sum af værdierne
#
# Hvert hoved blander sine værdivektorer med sine vægte: `(B, h, T, T) @ (B, h, T, d_k)` →
# `(B, h, T, d_k)`. Trin 3 til 5 er netop scaled dot-product attention, anvendt på alle hoveder
# på én gang.

# %%
heads = weights @ v_heads  # (B, h, T, d_k)
print("heads:", tuple(heads.shape))
in_one_call = scaled_dot_product_attention(q_heads, k_heads, v_heads)
same = torch.allclose(heads, in_one_call, atol=1e-6)
print("same as scaled_dot_product_attention:", same)
assert same

# %% [markdown] lang="en"
# ## 6. Concatenate the heads
#
# Move the tokens forward again and lay the heads side by side: `(B, h, T, d_k)` →
# `(B, T, h, d_k)` → `(B, T, h·d_k)`, which is `(B, T, d_model)` again. This needs `reshape`:
# `view` would raise, because the transposed tensor is not contiguous.
# {{ claim:tensor-view-after-transpose-raises }}

# %% [markdown] lang="es"
# ## 6. Concatenación de las cabezas
#
# Se vuelven a adelantar los tokens y se ponen las cabezas una junto a otra: `(B, h, T, d_k)` →
# `(B, T, h, d_k)` → `(B, T, h·d_k)`, que vuelve a ser `(B, T, d_model)`. Aquí hace falta
# `reshape`: `view` lanzaría un error, porque el tensor traspuesto no es contiguo.
# {{ claim:tensor-view-after-transpose-raises }}

# %% [markdown] lang="da"
# ## 6. Sammenkædning af hovederne
#
# Token-dimensionen flyttes frem igen, og hovederne lægges side om side: `(B, h, T, d_k)` →
# `(B, T, h, d_k)` → `(B, T, h·d_k)`, som igen er `(B, T, d_model)`. Det kræver `reshape`: `view`
# ville afbryde med en fejlmeddelelse, fordi den transponerede tensor ikke er sammenhængende i hukommelsen.
# {{ claim:tensor-view-after-transpose-raises }}

# %%
# (B, T, d_model)
concat = heads.transpose(1, 2).reshape(1, len(tokens), num_heads * mha.d_k)
print("concat:", tuple(concat.shape))

# %% [markdown] lang="en"
# ## 7. Output projection
#
# `W^O` mixes what the heads found into one `d_model` vector per token. The output has the shape
# of the input, so attention layers can be stacked.

# %% [markdown] lang="es"
# ## 7. Proyección de salida
#
# `W^O` combina lo que han encontrado las cabezas en un único vector de ancho `d_model` por token.
# La salida tiene la forma de la entrada; por eso las capas de atención se pueden apilar.

# %% [markdown] lang="da"
# ## 7. Outputprojektion
#
# `W^O` samler det, hovederne fandt, i én vektor med bredden `d_model` pr. token. Outputtet har
# inputtets form, så attention-lag kan stables.

# %%
out = mha.w_o(concat)  # (B, T, d_model)
print("out:", tuple(out.shape))

# %% [markdown] lang="en"
# ## Check: one call, and PyTorch
#
# The seven steps must give what `mha(x, x, x)` returns, and what `torch.nn.MultiheadAttention`
# returns once our weights are copied into its packed layout, `in_proj_weight` with the query,
# key and value rows one after the other. {{ claim:mha-packed-in-proj }} Its per-head weights must
# match too: with `average_attn_weights=False` it returns them as `(B, h, T, T)` instead of their
# mean over the heads. {{ claim:mha-need-weights-averaged }}

# %% [markdown] lang="es"
# ## Comprobación: una sola llamada y PyTorch
#
# Los siete pasos deben dar lo mismo que devuelve `mha(x, x, x)` y lo mismo que devuelve
# `torch.nn.MultiheadAttention` una vez copiados los pesos de la capa a su formato empaquetado:
# `in_proj_weight`, con las filas de las consultas, las de las claves y las de los valores una
# detrás de otra. {{ claim:mha-packed-in-proj }} También deben coincidir los pesos de atención de
# cada cabeza: con `average_attn_weights=False`, el módulo de PyTorch los devuelve como
# `(B, h, T, T)` en lugar de su media sobre las cabezas. {{ claim:mha-need-weights-averaged }}

# %% [markdown] lang="da"
# ## Sammenligning med ét kald og med PyTorch
#
# De syv trin skal give det, `mha(x, x, x)` returnerer, og det, `torch.nn.MultiheadAttention`
# returnerer, når de samme parametre er kopieret over i modulets pakkede format, `in_proj_weight`
# med rækkerne for forespørgsler, nøgler og værdier efter hinanden. {{ claim:mha-packed-in-proj }} Også
# attention-vægtene for hvert hoved skal stemme: med `average_attn_weights=False` returnerer modulet
# dem som `(B, h, T, T)` i stedet for gennemsnittet over hovederne.
# {{ claim:mha-need-weights-averaged }}

# %%
# --8<-- "snippets/torch_mha_weights.py:code"

# %%
ref = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
ref = load_into_torch(mha, ref).eval()
# (B, T, d_model) and the per-head weights (B, h, T, T):
expected, ref_weights = ref(x, x, x, average_attn_weights=False)
checks = {
    "steps == mha(x, x, x)": torch.allclose(out, mha(x, x, x), atol=1e-6),
    "steps == nn.MultiheadAttention": torch.allclose(out, expected, atol=1e-6),
    "weights == its per-head weights": torch.allclose(
        weights, ref_weights, atol=1e-6
    ),
}
for name, ok in checks.items():
    print(f"{name}: {ok}")
assert all(checks.values())

# %% [markdown] lang="en"
# ## With a causal mask
#
# In a decoder, token *i* may only look at tokens `1 … i`. The causal mask (`True` = may attend)
# sets the other scores to the most negative float before the softmax, so their weights are
# exactly 0 and every heatmap becomes lower-triangular. `nn.MultiheadAttention` wants the opposite
# convention for a boolean `attn_mask` (`True` = ignore), hence the `~`.
# {{ claim:mha-bool-attn-mask-true-ignores }}

# %% [markdown] lang="es"
# ## Con una máscara causal
#
# En un decodificador, el token *i* solo puede atender a los tokens `1 … i`. La máscara causal
# (`True` = puede atender) pone las demás puntuaciones al valor de coma flotante más negativo
# antes del softmax, de modo que sus pesos valen exactamente 0 y cada mapa de calor queda triangular
# inferior. `nn.MultiheadAttention` espera la convención contraria para un `attn_mask` booleano
# (`True` = ignorar), de ahí el `~`. {{ claim:mha-bool-attn-mask-true-ignores }}

# %% [markdown] lang="da"
# ## Med en kausal maske
#
# I en decoder må token *i* kun se på tokens `1 … i`. Den kausale maske (`True` = må bruges)
# sætter de øvrige scorer til den mest negative float-værdi før softmax, så deres vægte bliver
# nøjagtig 0, og hvert heatmap får form som en nedre trekantsmatrix. `nn.MultiheadAttention` bruger
# den modsatte konvention for en boolsk `attn_mask` (`True` = ignorér), deraf `~`.
# {{ claim:mha-bool-attn-mask-true-ignores }}

# %%
# --8<-- "snippets/masks.py:code"

# %% alt={"en": "Four heatmaps, one per head, with a causal mask: every weight above the diagonal is 0.", "es": "Cuatro mapas de calor, uno por cabeza, con máscara causal: todos los pesos por encima de la diagonal son 0.", "da": "Fire heatmaps, ét pr. hoved, med kausal maske: alle vægte over diagonalen er 0."}
attend = causal_mask(len(tokens))  # (T, T), True = may attend
lowest = torch.finfo(scores.dtype).min
masked = torch.softmax(scores.masked_fill(~attend, lowest), dim=-1)
above = masked.triu(diagonal=1).max().item()
print("largest weight above the diagonal:", above)
# nn.MultiheadAttention: True = ignore
expected, _ = ref(x, x, x, attn_mask=~attend)
same = torch.allclose(mha(x, x, x, attend=attend), expected, atol=1e-6)
print("mha with the causal mask == nn.MultiheadAttention:", same)
assert same and masked.triu(diagonal=1).max() == 0
plot_heads(masked[0], tokens, tokens)
