# %% [markdown] lang="en"
# # Cross-attention in an encoder-decoder
#
# In an encoder-decoder transformer, cross-attention is where the decoder reads the source
# sentence: the queries come from the target tokens the decoder is producing, the keys and values
# from the encoder's output for the source tokens. This notebook runs one cross-attention layer on
# a toy translation, English to Spanish, and draws for every head which source tokens each target
# token attends to.
#
# Nothing here is trained. Instead, the vectors and two of the four heads are set by hand so that
# the heatmaps have something to show: one head matches words by meaning, one by position, and
# the other two keep the random weights a layer starts with.

# %% [markdown] lang="es"
# # Atención cruzada en un codificador-decodificador
#
# En un transformer codificador-decodificador, la atención cruzada es el punto en el que el
# decodificador lee la oración de origen: las consultas proceden de los tokens de destino que el
# decodificador va generando, y las claves y los valores, de la salida del codificador para los
# tokens de origen. Este cuaderno ejecuta una capa de atención cruzada sobre una pequeña traducción
# de ejemplo, del inglés al español, y dibuja para cada cabeza a qué tokens de origen atiende cada
# token de destino.
#
# Aquí no se entrena nada. Para que los mapas de calor tengan algo que mostrar, los vectores y dos
# de las cuatro cabezas se fijan a mano: una cabeza empareja las palabras por su significado, otra
# por su posición, y las otras dos conservan los pesos aleatorios con los que empieza una capa.

# %% [markdown] lang="da"
# # Cross-attention i en encoder-decoder
#
# I en encoder-decoder-transformer er cross-attention stedet, hvor decoderen læser kildesætningen:
# forespørgslerne kommer fra de mål-tokens, decoderen er ved at generere, og nøglerne og værdierne
# fra encoderens output for kildens tokens. Denne notebook kører ét cross-attention-lag på en lille,
# konstrueret oversættelse fra engelsk til spansk og tegner for hvert hoved, hvilke kilde-tokens
# hvert mål-token lægger vægt på.
#
# Her trænes intet. I stedet er vektorerne og to af de fire hoveder sat op manuelt, så heatmappene
# har noget at vise: ét hoved kobler ord sammen efter betydning, et andet efter position, og de to
# sidste beholder de tilfældige parametre, et lag starter med.

# %%
# --8<-- "snippets/scaled_dot_product_attention.py:code"
# --8<-- "snippets/multi_head_attention.py:code"
# --8<-- "snippets/cross_attention.py:code"
# --8<-- "snippets/attention_weights.py:code"
# --8<-- "docs/notebooks/_heatmaps.py:code"

# %% [markdown] lang="en"
# ## The toy sentences
#
# Source: *the black cat sleeps*; target: *el gato negro duerme*. Spanish puts the adjective after
# the noun, so the word order crosses: *gato* translates *cat*, the third source word, but stands
# second. The source is padded to six tokens, as it would be in a batch with longer sentences, and
# the padding mask (`True` = padding) keeps every head away from the padding.
#
# Each token's vector has three parts: a *meaning* vector shared by a word and its translation, a
# *position* vector, and some noise. In a real model the encoder and the decoder learn such
# vectors; here they are orthonormal by construction.

# %% [markdown] lang="es"
# ## Las oraciones de ejemplo
#
# Origen: *the black cat sleeps*; destino: *el gato negro duerme*. El español pone el adjetivo
# después del sustantivo, por lo que el orden de las palabras se cruza: *gato* traduce *cat*, la
# tercera palabra de origen, pero va en segundo lugar. El origen se rellena hasta seis tokens, como
# ocurriría en un lote con oraciones más largas, y la máscara de relleno (`True` = relleno) impide
# que las cabezas atiendan al relleno.
#
# El vector de cada token tiene tres partes: un vector de *significado* que comparten una palabra y
# su traducción, un vector de *posición* y algo de ruido. En un modelo real, el codificador y el
# decodificador aprenden vectores así; aquí son ortonormales por construcción.

# %% [markdown] lang="da"
# ## Eksempelsætningerne
#
# Kilde: *the black cat sleeps*; mål: *el gato negro duerme*. På spansk står adjektivet efter
# substantivet, så ordene bytter plads: *gato* oversætter *cat*, det tredje kildeord, men står som
# nummer to. Kilden er fyldt op med padding til seks tokens, som den ville være i et batch med
# længere sætninger, og padding-masken (`True` = padding) holder alle hoveder væk fra paddingen.
#
# Hvert tokens vektor har tre dele: en betydningsvektor (*meaning*), som et ord og dets oversættelse
# deler, en positionsvektor og lidt støj. I en trænet model lærer encoderen og decoderen sådanne
# vektorer; her er de konstrueret, så de er ortonormale.

# %%
torch.manual_seed(0)
source = ["the", "black", "cat", "sleeps", "<pad>", "<pad>"]
target = ["el", "gato", "negro", "duerme"]
meaning_of = {  # a word and its translation share a meaning
    "the": 0, "el": 0, "black": 1, "negro": 1, "cat": 2, "gato": 2,
    "sleeps": 3, "duerme": 3, "<pad>": 4,
}

d_model, num_heads = 32, 4
d_k = d_model // num_heads  # 8
# 8 orthonormal rows of width d_k
meanings = torch.linalg.qr(torch.randn(d_k, d_k)).Q
positions = torch.linalg.qr(torch.randn(d_k, d_k)).Q


def embed(tokens):
    """(1, T, d_model): [meaning | position | noise] for each token."""
    noise = 0.3 * torch.randn(len(tokens), d_model - 2 * d_k)
    rows = [
        torch.cat([meanings[meaning_of[token]], positions[i], noise[i]])
        for i, token in enumerate(tokens)
    ]
    return torch.stack(rows)[None]


memory = embed(source)  # (B, S, d_model): what the encoder hands over
x = embed(target)  # (B, L, d_model): the decoder's states for the target
# (B, S), True = padding
padding = torch.tensor([[token == "<pad>" for token in source]])
print("memory (encoder output):", tuple(memory.shape))
print("x (decoder states):     ", tuple(x.shape))
print("padding mask:", padding.int().tolist())

# %% [markdown] lang="en"
# ## Two heads with a job
#
# Heads count from 1 and tensor indices from 0. Head *i* owns the rows at indices
# `(i−1)·d_k … i·d_k − 1` of the stored weights `w_q.weight` and `w_k.weight`, which hold `W^Q`
# and `W^K` transposed: those rows are its own `(W_i^Q)^T` and `(W_i^K)^T`. Head 1 gets a
# projection that reads only the meaning part, the same for queries and keys, so its score is high
# where a target word and a source word share a meaning. Head 2 does the same with the position
# part. Heads 3 and 4 keep their random initial weights.

# %% [markdown] lang="es"
# ## Dos cabezas con una tarea fija
#
# Las cabezas se cuentan desde 1 y los índices de los tensores desde 0. A la cabeza *i* le
# corresponden las filas de índices `(i−1)·d_k … i·d_k − 1` de los pesos guardados `w_q.weight` y
# `w_k.weight`, que contienen `W^Q` y `W^K` traspuestas: esas filas son sus propias `(W_i^Q)^T` y
# `(W_i^K)^T`. La cabeza 1 recibe una proyección que solo lee la parte de significado, la misma
# para consultas y claves; por eso su puntuación es alta donde una palabra de destino y una de
# origen comparten significado. La cabeza 2 hace lo mismo con la parte de posición. Las cabezas 3
# y 4 conservan sus pesos iniciales aleatorios.

# %% [markdown] lang="da"
# ## To hoveder med en opgave
#
# Hovederne tælles fra 1 og tensorernes indekser fra 0. Til hoved *i* hører rækkerne med indekserne
# `(i−1)·d_k … i·d_k − 1` i de gemte vægtmatricer `w_q.weight` og `w_k.weight`, som rummer `W^Q` og
# `W^K` transponeret: disse rækker er hovedets egne `(W_i^Q)^T` og `(W_i^K)^T`. Hoved 1 får en
# projektion, der kun læser betydningsdelen, den samme for forespørgsler og nøgler, så dets score er
# høj, hvor et målord og et kildeord deler betydning. Hoved 2 gør det samme med positionsdelen.
# Hoved 3 og 4 beholder deres tilfældige startparametre.

# %%
attention = CrossAttention(d_model, num_heads).eval()
# head 1: meaning, head 2: position
parts = {1: slice(0, d_k), 2: slice(d_k, 2 * d_k)}
with torch.no_grad():
    for head, part in parts.items():
        rows = slice((head - 1) * d_k, head * d_k)  # head i is index i - 1
        for projection in (attention.w_q, attention.w_k):
            projection.weight[rows] = 0.0
            projection.weight[rows, part] = 3.0 * torch.eye(d_k)
            projection.bias[rows] = 0.0
print("W^Q and W^K:", tuple(attention.w_q.weight.shape), " d_k =", d_k)
for head, part in parts.items():
    print(f"head {head} reads features {part.start}..{part.stop - 1}")

# %% [markdown] lang="en"
# ## Cross-attention, per head
#
# The decoder's states ask, the encoder's output answers: `attention(x, memory, memory,
# key_padding_mask=padding)` returns one vector per target token, `(B, L, d_model)`. The weights
# behind it are `(B, h, L, S)`: one `L × S` matrix per head, a row per target token and a column
# per source token.

# %% [markdown] lang="es"
# ## Atención cruzada, por cabeza
#
# Los estados del decodificador preguntan y la salida del codificador responde:
# `attention(x, memory, memory, key_padding_mask=padding)` devuelve un vector por token de destino,
# `(B, L, d_model)`. Los pesos correspondientes tienen forma `(B, h, L, S)`: una matriz de `L × S`
# por cabeza, con una fila por token de destino y una columna por token de origen.

# %% [markdown] lang="da"
# ## Cross-attention, hoved for hoved
#
# Decoderens tilstande spørger, encoderens output svarer:
# `attention(x, memory, memory, key_padding_mask=padding)` returnerer én vektor pr. mål-token,
# `(B, L, d_model)`. De bagvedliggende attention-vægte har formen `(B, h, L, S)`: én `L × S`-matrix pr.
# hoved, en række pr. mål-token og en søjle pr. kilde-token.

# %% alt={"en": "Four heatmaps, one per head, of how much each Spanish target token attends to each English source token: head 1 links el-the, gato-cat, negro-black and duerme-sleeps, head 2 follows the diagonal, heads 3 and 4 are spread out, and the padding columns are 0.", "es": "Cuatro mapas de calor, uno por cabeza, de cuánto atiende cada token de destino en español a cada token de origen en inglés: la cabeza 1 une «el» con «the», «gato» con «cat», «negro» con «black» y «duerme» con «sleeps»; la cabeza 2 sigue la diagonal; las cabezas 3 y 4 reparten su peso de forma casi uniforme, y las columnas de relleno valen 0.", "da": "Fire heatmaps, ét pr. hoved, der viser, hvor meget vægt hvert spansk mål-token lægger på hvert engelsk kilde-token: hoved 1 forbinder \"el\" med \"the\", \"gato\" med \"cat\", \"negro\" med \"black\" og \"duerme\" med \"sleeps\", hoved 2 følger diagonalen, hoved 3 og 4 spreder deres vægt bredt, og padding-søjlerne er 0."}
out = attention(x, memory, memory, key_padding_mask=padding)  # (B, L, d_model)
attend = ~padding[:, None, None, :]  # (B, 1, 1, S), True = may attend
# (B, h, L, S): one L x S matrix per head
weights = multi_head_attention_weights(
    attention, x, memory, attend=attend, average=False
)
print("output:", tuple(out.shape), "  weights:", tuple(weights.shape))
plot_heads(weights[0], target, source)

# %% [markdown] lang="en"
# ## Reading the heatmaps
#
# Head 1 found the translation: *gato* looks at *cat* and *negro* at *black*, across the change of
# word order. Head 2 looks at the same position in the other sentence, whatever the word is. Heads
# 3 and 4 spread their attention almost evenly, as untrained heads do. In every head the two
# padding columns are exactly 0.

# %% [markdown] lang="es"
# ## Cómo leer los mapas de calor
#
# La cabeza 1 encontró la traducción: *gato* mira a *cat* y *negro*, a *black*, a pesar del cambio de
# orden. La cabeza 2 mira a la misma posición en la otra oración, sea cual sea la palabra. Las cabezas
# 3 y 4 reparten su atención casi por igual, como hacen las cabezas sin entrenar. En todas las
# cabezas, las dos columnas de relleno valen exactamente 0.

# %% [markdown] lang="da"
# ## Sådan læser man heatmappene
#
# Hoved 1 fandt oversættelsen: *gato* ser på *cat* og *negro* på *black*, selvom ordstillingen er
# byttet om. Hoved 2 ser på den samme position i den anden sætning, uanset hvilket ord der står
# der. Hoved 3 og 4 spreder deres vægt næsten ligeligt, som utrænede hoveder gør. I alle hoveder
# er de to padding-søjler nøjagtig 0.

# %%
def head_weights(head):
    """(L, S): the weights of head `head`, counting from 1 (index head - 1)."""
    return weights[0, head - 1]


by_meaning = [source[j] for j in head_weights(1).argmax(dim=-1)]
by_position = [source[j] for j in head_weights(2).argmax(dim=-1)]
print("head 1, most attended source token:", dict(zip(target, by_meaning)))
print("head 2, most attended source token:", dict(zip(target, by_position)))
print("largest weight on <pad>:", weights[..., 4:].max().item())
assert by_meaning == ["the", "cat", "black", "sleeps"]
assert by_position == ["the", "black", "cat", "sleeps"]
assert weights[..., 4:].max() == 0

# %% [markdown] lang="en"
# ## Check against PyTorch
#
# The same layer as a `torch.nn.MultiheadAttention`: the weights are copied into its packed layout,
# {{ claim:mha-packed-in-proj }} and its `key_padding_mask` uses the same convention as ours
# (`True` = padding). {{ claim:mha-key-padding-true-ignores }} Outputs and per-head weights must
# agree.

# %% [markdown] lang="es"
# ## Comprobación con PyTorch
#
# La misma capa, construida como una `torch.nn.MultiheadAttention`: los pesos se copian a su formato
# empaquetado, {{ claim:mha-packed-in-proj }} y su `key_padding_mask` sigue la misma convención que
# la del código de este sitio (`True` = relleno). {{ claim:mha-key-padding-true-ignores }} Las salidas y los pesos de
# cada cabeza deben coincidir.

# %% [markdown] lang="da"
# ## Sammenligning med PyTorch
#
# Det samme lag, bygget som `torch.nn.MultiheadAttention`: parametrene kopieres over i dets pakkede
# format, {{ claim:mha-packed-in-proj }} og dets `key_padding_mask` bruger samme konvention som
# sitets kode (`True` = padding). {{ claim:mha-key-padding-true-ignores }} Output og attention-vægte pr. hoved skal
# stemme overens.

# %%
# --8<-- "snippets/torch_mha_weights.py:code"

# %%
reference = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
reference = load_into_torch(attention, reference).eval()
expected, expected_weights = reference(
    x, memory, memory, key_padding_mask=padding, average_attn_weights=False
)
checks = {
    "output == nn.MultiheadAttention": torch.allclose(
        out, expected, atol=1e-6
    ),
    "weights == nn.MultiheadAttention": torch.allclose(
        weights, expected_weights, atol=1e-6
    ),
}
for name, ok in checks.items():
    print(f"{name}: {ok}")
assert all(checks.values())
