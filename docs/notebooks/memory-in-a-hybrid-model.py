# %% [markdown] lang="en"
# # Where the memory goes in a hybrid model
#
# During decoding, a full-attention layer keeps the keys and values of all the tokens so far: the
# KV cache, which grows by the same amount with every token of the context. Recent models shrink
# it in different ways. This notebook counts, with the glossary's own code and the
# shapes in four models' published configurations, how many bytes each layer keeps per token and how
# the total grows with the context: a dense model with grouped-query attention, multi-head latent
# attention, a mix of sliding-window and global layers, and a hybrid of linear-attention and
# full-attention layers. Then it draws the attention maps of a head with a gate and of a head
# without one on a small example, to show what a gate changes about an attention sink.
#
# Nothing is trained and no weights are loaded: the byte counts follow from the configurations
# alone, and the attention maps come from random or hand-made vectors.

# %% [markdown] lang="es"
# # Adónde va la memoria en un modelo híbrido
#
# Al decodificar, una capa de atención completa guarda las claves y los valores de todos los tokens
# anteriores: la caché KV, que crece en la misma cantidad con cada token del contexto. Los modelos
# recientes la reducen de maneras distintas. Este cuaderno cuenta, con el propio código del glosario
# y los tamaños que fijan las configuraciones publicadas de cuatro modelos, cuántos bytes guarda
# cada capa por token y cómo crece el total con el contexto: un modelo denso con atención de
# consultas agrupadas, la atención latente multicabeza, una combinación de capas de ventana
# deslizante y capas globales, y un híbrido de capas de atención lineal y capas de atención
# completa. Después dibuja, en un ejemplo pequeño, los mapas de atención de una cabeza con puerta y
# de otra sin ella, para ver qué cambia una puerta en un sumidero de atención.
#
# No se entrena nada ni se cargan pesos: los bytes se deducen solo de las configuraciones, y los
# mapas de atención salen de vectores aleatorios o construidos a mano.

# %% [markdown] lang="da"
# # Hvad hukommelsen går til i en hybridmodel
#
# Under afkodning gemmer et lag med fuld attention nøglerne og værdierne for alle tokens indtil nu.
# Det er KV-cachen, som vokser lige meget for hvert token i konteksten. Nyere modeller gør den
# mindre på forskellige måder. Med ordlistens egen kode og dimensionerne fra fire modellers
# offentliggjorte konfigurationer tæller denne notebook, hvor mange bytes hvert lag gemmer pr.
# token, og hvordan det samlede tal vokser med konteksten. De fire designs er en tæt model med
# grouped-query attention, multi-head latent attention, en blanding af sliding-window-lag og globale
# lag samt en hybrid af lag med linear attention og lag med fuld attention. Derefter tegner den
# attention-kortene for et hoved
# med en gate og et hoved uden gate i et lille, konstrueret eksempel for at vise, hvad en gate
# ændrer ved en attention sink.
#
# Her trænes intet, og ingen parametre indlæses. Antallet af bytes følger alene af
# konfigurationerne, og attention-kortene kommer fra tilfældige eller håndlavede vektorer.

# %%
# --8<-- "snippets/kv_cache.py:memory"
# --8<-- "snippets/multi_head_latent_attention.py:cache_bytes"
# --8<-- "snippets/hybrid_attention.py:cost"
# --8<-- "snippets/gated_attention.py:code"
# --8<-- "docs/notebooks/_heatmaps.py:code"

# %% [markdown] lang="en"
# ## Four ways to cache
#
# The four models, with the shapes their configurations give; every cached number is in bfloat16
# (2 bytes) except the recurrent state:
#
# | model | layers | what a layer caches |
# |---|---|---|
# | Llama 3 8B | 32 full attention | per token, a key and a value for each of 8 KV heads of width 128 (GQA) |
# | DeepSeek-V3 | 61 full attention | per token, one latent of width 512 and one rotary key of width 64 (MLA) |
# | Gemma 3 27B | 52 local, 10 global | per token, 16 KV heads of width 128; a local layer keeps the last 1024 tokens only |
# | Qwen3-Next | 36 Gated DeltaNet, 12 full attention | full: per token, 2 KV heads of width 256; Gated DeltaNet: a fixed state |
#
# Gemma 3 repeats five local layers with a window of 1024 and one global layer, so its 62 layers
# hold 10 global ones. Qwen3-Next (the defaults of Transformers' `Qwen3NextConfig`, the shapes of
# Qwen3-Next-80B-A3B) makes every fourth layer full attention; each of its other layers keeps a
# recurrent state of $32 \times 128 \times 128$ numbers in float32 and a convolution state of
# $8192 \times 4$ numbers, whatever the length. The first plot shows one sequence's cache layer by
# layer at 32,768 tokens; the second shows the whole cache as the context grows. The models differ
# in size (Llama 3 8B has 8 billion parameters, Gemma 3 27B 27 billion, DeepSeek-V3 671 billion
# with 37 billion active per token, Qwen3-Next-80B-A3B 80 billion with 3 billion active), so this
# compares how each design caches, not which model is cheaper to serve. The counts are what each
# design needs: an engine that knows MLA caches DeepSeek-V3's latent, as Transformers 5.25.0 does,
# while Transformers 4.57 cached its per-head keys and values, 71 times more; and the sizes of the recurrent and
# convolution states, and the 1024 or 1023 tokens a sliding layer keeps, differ a little between
# libraries. Llama 3 8B was trained with 8192 positions; its curve beyond that is
# what its shapes would cost.
#
# At 32,768 tokens, each new token adds 128 KiB to Llama 3 8B's cache, 68.625 KiB (70,272 bytes) to
# DeepSeek-V3's, 80 KiB to Gemma 3's (only its global layers still grow) and 24 KiB to
# Qwen3-Next's. At 1024 tokens Gemma 3 holds the most, because each of its 62 layers caches 16 KV
# heads and, up to 1024 tokens, even the local layers hold every token. Past 1024 tokens its local layers stop growing, and from 8875 tokens on Llama 3 8B
# holds more. Qwen3-Next starts with about 74 MiB of state that does not grow and holds the least
# from 1704 tokens on: at 131,072 tokens, 3.07 GiB against 16 GiB for Llama 3 8B.

# %% [markdown] lang="es"
# ## Cuatro maneras de guardar en caché
#
# Los cuatro modelos, con los tamaños que dan sus configuraciones; todos los números de la caché
# están en bfloat16 (2 bytes), salvo el estado recurrente:
#
# | modelo | capas | qué guarda cada capa |
# |---|---|---|
# | Llama 3 8B | 32 de atención completa | por token, una clave y un valor para cada una de sus 8 cabezas KV de ancho 128 (GQA) |
# | DeepSeek-V3 | 61 de atención completa | por token, un vector latente de ancho 512 y una clave rotatoria de ancho 64 (MLA) |
# | Gemma 3 27B | 52 locales y 10 globales | por token, 16 cabezas KV de ancho 128; una capa local solo guarda los últimos 1024 tokens |
# | Qwen3-Next | 36 Gated DeltaNet y 12 de atención completa | las completas, por token, 2 cabezas KV de ancho 256; las Gated DeltaNet, un estado de tamaño fijo |
#
# Gemma 3 repite 5 capas locales con una ventana de 1024 y una capa global, de modo que 10 de sus
# 62 capas son globales. Qwen3-Next (los valores por defecto de `Qwen3NextConfig` en Transformers,
# los tamaños de Qwen3-Next-80B-A3B) hace de atención completa una de cada cuatro capas; cada una
# de las demás guarda un estado recurrente de $32 \times 128 \times 128$ números en float32 y un
# estado de convolución de $8192 \times 4$ números, sea cual sea la longitud. El primer gráfico
# muestra la caché de una secuencia capa por capa con 32 768 tokens; el segundo, la caché entera a
# medida que crece el contexto. Los modelos no tienen el mismo número de parámetros: Llama 3 8B
# tiene 8000 millones; Gemma 3 27B, 27 000 millones; DeepSeek-V3, 671 000 millones, de los que
# 37 000 millones se activan en cada token; y Qwen3-Next-80B-A3B, 80 000 millones, de los que se
# activan 3000 millones. Por eso se compara qué guarda en caché cada diseño, no qué modelo es más
# barato de servir. Las cifras son lo que necesita cada diseño: un sistema de inferencia que
# implementa MLA guarda en caché el vector latente de DeepSeek-V3, como hace Transformers
# `5.25.0`, mientras que Transformers `4.57` guardaba las claves y los valores de cada cabeza,
# 71 veces más. Además, el tamaño del estado recurrente y del estado de convolución, y los 1024 o 1023
# tokens que conserva una capa de ventana deslizante, varían un poco de una biblioteca a otra.
# Llama 3 8B se entrenó con un contexto de 8192 posiciones; más allá, su curva solo indica cuánto
# ocuparía la caché con esos tamaños.
#
# Con 32 768 tokens, cada token nuevo añade 128 KiB a la caché de Llama 3 8B, 68,625 KiB
# (70 272 bytes) a la de DeepSeek-V3, 80 KiB a la de Gemma 3 (solo crecen ya sus capas globales) y
# 24 KiB a la de Qwen3-Next. Con 1024 tokens, Gemma 3 es el que más guarda, porque cada una de sus
# 62 capas guarda 16 cabezas KV y, hasta los 1024 tokens, también las capas locales conservan todos
# los tokens. Pasados 1024 tokens, sus capas locales dejan de crecer, y a partir de 8875 tokens
# Llama 3 8B pasa a guardar más. Qwen3-Next parte de unos 74 MiB de estado que no crece y es el que
# menos guarda a partir de 1704 tokens: con 131 072 tokens, 3,07 GiB frente a 16 GiB en Llama 3 8B.

# %% [markdown] lang="da"
# ## Fire måder at cache på
#
# Tabellen viser de fire modeller med de mål, deres konfigurationer angiver. Alle tal i cachen er i
# bfloat16 (2 bytes) undtagen den rekurrente tilstand:
#
# | model | lag | hvad et lag gemmer |
# |---|---|---|
# | Llama 3 8B | 32 med fuld attention | pr. token en nøgle og en værdi for hvert af 8 KV-hoveder med bredden 128 (GQA) |
# | DeepSeek-V3 | 61 med fuld attention | pr. token én latent vektor med bredden 512 og én RoPE-nøgle med bredden 64 (MLA) |
# | Gemma 3 27B | 52 lokale, 10 globale | pr. token 16 KV-hoveder med bredden 128; et lokalt lag gemmer kun de seneste 1.024 tokens |
# | Qwen3-Next | 36 Gated DeltaNet, 12 med fuld attention | lag med fuld attention: pr. token 2 KV-hoveder med bredden 256; Gated DeltaNet-lag: en tilstand af fast størrelse |
#
# Gemma 3 gentager fem lokale lag med et vindue på 1.024 tokens og ét globalt lag, så 10 af de 62 lag er
# globale. I Qwen3-Next (standardværdierne i Transformers' `Qwen3NextConfig`, målene fra
# Qwen3-Next-80B-A3B) er hvert fjerde lag et lag med fuld attention. Hvert af de øvrige lag gemmer
# en rekurrent tilstand på $32 \times 128 \times 128$ tal i float32 og en foldningstilstand på
# $8192 \times 4$ tal, uanset længden. Det første diagram viser cachen for én sekvens lag for lag
# ved 32.768 tokens, det andet hele cachen som funktion af kontekstens længde. Modellerne har ikke lige mange
# parametre: Llama 3 8B har 8 milliarder, Gemma 3 27B 27 milliarder, DeepSeek-V3 671 milliarder,
# hvoraf 37 milliarder er aktive pr. token, og Qwen3-Next-80B-A3B 80 milliarder, hvoraf 3 milliarder
# er aktive. Sammenligningen viser derfor, hvordan hvert design cacher, ikke hvilken model der er
# billigst at køre. Tallene viser, hvad hvert design kræver: et bibliotek, der understøtter MLA, cacher
# DeepSeek-V3's latente vektor, som Transformers 5.25.0 gør, mens Transformers i version 4.57
# cachede nøgler og værdier pr. hoved, 71 gange så meget. Desuden varierer størrelsen af den
# rekurrente tilstand og af foldningstilstanden en smule fra bibliotek til bibliotek, og det samme
# gælder, om et sliding-window-lag gemmer 1.024 eller 1.023 tokens. Llama 3 8B blev trænet med 8.192
# positioner, og ud over dem viser kurven, hvad en cache med modellens dimensioner ville koste.
#
# Ved 32.768 tokens lægger hvert nyt token 128 KiB til cachen i Llama 3 8B, 68,625 KiB
# (70.272 bytes) i DeepSeek-V3, 80 KiB i Gemma 3 (kun de globale lag vokser stadig) og 24 KiB i
# Qwen3-Next. Ved 1.024 tokens gemmer Gemma 3 mest, fordi hvert af de 62 lag cacher 16 KV-hoveder,
# og fordi selv de lokale lag gemmer alle tokens, så længe der højst er 1.024. Ud over 1.024 tokens
# holder de lokale lag op med at vokse, og fra 8.875 tokens gemmer Llama 3 8B mere. Qwen3-Next
# starter med omkring 74 MiB tilstand, som ikke vokser, og gemmer mindst fra 1.704 tokens: ved
# 131.072 tokens 3,07 GiB mod 16 GiB i Llama 3 8B.

# %% alt={"en": "Two charts. Left: the cache of one sequence per layer at 32,768 tokens, in MiB, against the layer number. Llama 3 8B: 128 MiB in each of 32 layers. DeepSeek-V3: 36 MiB in each of 61 layers. Gemma 3 27B: 8 MiB in the local layers and 256 MiB in every sixth, global, layer. Qwen3-Next: 64 MiB in every fourth layer and about 2 MiB in the others. Right: the whole cache in GiB against the number of tokens from 1024 to 131,072, both axes logarithmic. Gemma 3 starts highest at about 0.5 GiB and is overtaken by Llama 3 8B just above 8192 tokens; Llama 3 8B ends at 16 GiB, Gemma 3 at about 10 GiB, DeepSeek-V3 at about 8.6 GiB and Qwen3-Next, lowest from about 1700 tokens on, at about 3 GiB.", "es": "Dos gráficos. A la izquierda, la caché de una secuencia por capa con 32 768 tokens, en MiB, frente al número de capa. Llama 3 8B: 128 MiB en cada una de sus 32 capas. DeepSeek-V3: 36 MiB en cada una de sus 61 capas. Gemma 3 27B: 8 MiB en las capas locales y 256 MiB en una de cada seis, la global. Qwen3-Next: 64 MiB en una de cada cuatro capas y unos 2 MiB en las demás. A la derecha, la caché entera en GiB frente al número de tokens, de 1024 a 131 072, con los dos ejes en escala logarítmica. La curva de Gemma 3 empieza en lo más alto, con unos 0,5 GiB, y la de Llama 3 8B la supera poco después de los 8192 tokens; al final, la de Llama 3 8B llega a 16 GiB, la de Gemma 3, a unos 10 GiB, la de DeepSeek-V3, a unos 8,6 GiB, y la de Qwen3-Next, la más baja desde unos 1700 tokens, a unos 3 GiB.", "da": "To diagrammer. Til venstre cachen for én sekvens pr. lag ved 32.768 tokens i MiB som funktion af lagnummeret. Llama 3 8B: 128 MiB i hvert af 32 lag. DeepSeek-V3: 36 MiB i hvert af 61 lag. Gemma 3 27B: 8 MiB i de lokale lag og 256 MiB i hvert sjette lag, det globale. Qwen3-Next: 64 MiB i hvert fjerde lag og omkring 2 MiB i de øvrige. Til højre hele cachen i GiB som funktion af antallet af tokens fra 1.024 til 131.072, med logaritmiske akser. Gemma 3 starter højest med omkring 0,5 GiB og overhales af Llama 3 8B lidt over 8.192 tokens. Til sidst når Llama 3 8B 16 GiB, Gemma 3 omkring 10 GiB, DeepSeek-V3 omkring 8,6 GiB og Qwen3-Next, der ligger lavest fra omkring 1.700 tokens, omkring 3 GiB."}
import matplotlib.pyplot as plt

bf16 = 2  # bytes per cached number


def llama3_8b(T):  # 32 layers, GQA with 8 KV heads of 128
    return [kv_bytes_per_token(1, 8, 128, bf16) * T] * 32


def deepseek_v3(T):  # 61 layers of MLA: a 512 latent + a 64 rotary key
    # Only the MLA entry is used: num_heads, head_dim and num_kv_heads
    # feed the function's MHA and GQA entries, not DeepSeek-V3's shapes.
    mla = kv_cache_bytes_per_token(num_heads=128, head_dim=128,
                                   num_kv_heads=8, kv_rank=512,
                                   rope_dim=64)["MLA"]
    return [mla * T] * 61


def gemma3_27b(T):  # 62 layers: five local (window 1024), one global
    per_token = kv_bytes_per_token(1, 16, 128, bf16)
    kinds = ["local"] * 5 + ["global"]
    return [per_token * (min(T, 1024) if kinds[i % 6] == "local" else T)
            for i in range(62)]


qwen3_next_types = (["linear_attention"] * 3 + ["full_attention"]) * 12
state = 32 * 128 * 128 * 4 + 8192 * 4 * bf16  # bytes per DeltaNet layer


def qwen3_next(T):  # 48 layers: three Gated DeltaNet, one full
    return [cache_bytes([kind], T, kv_heads=2, head_dim=256,
                        state_bytes=state) for kind in qwen3_next_types]


models = {"Llama 3 8B (GQA)": llama3_8b, "DeepSeek-V3 (MLA)": deepseek_v3,
          "Gemma 3 27B (5 local : 1 global)": gemma3_27b,
          "Qwen3-Next (3 DeltaNet : 1 full)": qwen3_next}

# The per-layer lists add up to what the snippets' whole-model formulas say.
assert sum(llama3_8b(1000)) == 1000 * kv_bytes_per_token(32, 8, 128, bf16)
assert sum(qwen3_next(1000)) == cache_bytes(
    qwen3_next_types, 1000, kv_heads=2, head_dim=256, state_bytes=state)

for name, layers in models.items():
    growth = sum(layers(32769)) - sum(layers(32768))
    print(f"{name:33}: {format_bytes(growth):>10} more per token at 32768,"
          f" {format_bytes(sum(layers(32768))):>10} in all")

def total(model, T):
    return sum(model(T))


T = next(T for T in range(1, 10 ** 6)
         if total(llama3_8b, T) > total(gemma3_27b, T))
print("Llama 3 8B holds more than Gemma 3 27B from", T, "tokens on")
others = [llama3_8b, deepseek_v3, gemma3_27b]
T = next(T for T in range(1, 10 ** 6)
         if all(total(qwen3_next, T) < total(m, T) for m in others))
print("Qwen3-Next holds the least from", T, "tokens on")

lengths = [2 ** p for p in range(10, 18)]  # 1024 .. 131072 tokens
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
for name, layers in models.items():
    per_layer = [b / 2 ** 20 for b in layers(32768)]
    axes[0].step(range(1, len(per_layer) + 1), per_layer, where="mid",
                 label=name)
    axes[1].loglog(lengths, [total(layers, T) / 2 ** 30 for T in lengths],
                   marker=".", label=name)
axes[0].set_title("cache per layer at 32768 tokens (MiB), all KV heads")
axes[0].set_xlabel("layer")
axes[1].set_title("whole cache (GiB)")
axes[1].set_xlabel("tokens")
axes[1].legend(fontsize=7)
plt.show()

# %% [markdown] lang="en"
# ## Attention maps with and without a gate
#
# Qwen3-Next's full-attention layers are [gated attention](../../glossary/gated-attention/): each
# head's output is multiplied by a sigmoid gate computed from the token, before the output
# projection. The gate acts after the softmax, so it does not change the attention weights. The
# cell builds a random `GatedAttention` layer with two heads of width 8 over six tokens, computes its
# weights from its own projections (`split_query_gate` takes the queries out of `q_proj`), checks
# that these weights and the gates give the layer's output, and draws them. The same queries and
# keys without the gate give the same map. With random weights there is no sink: the first token
# gets on average about 0.3 of each later row, close to the 0.29 that an even split over the visible tokens
# would give, and row 1 is all on the first token only because the causal mask leaves it nothing
# else.

# %% [markdown] lang="es"
# ## Mapas de atención con puerta y sin ella
#
# Las capas de atención completa de Qwen3-Next usan [atención con puertas](../../glossary/gated-attention/):
# la salida de cada cabeza se multiplica, antes de la proyección de salida, por una puerta sigmoide
# que se calcula a partir del token. La puerta actúa después del softmax, así que no cambia los pesos
# de atención. La celda construye una capa `GatedAttention` aleatoria con dos cabezas de ancho 8
# sobre seis tokens, calcula sus pesos con sus propias proyecciones (`split_query_gate` extrae las
# consultas de la salida de `q_proj`), comprueba que esos pesos y las puertas dan la salida de la
# capa y los dibuja. Las mismas consultas y claves sin la puerta dan el mismo mapa. Con pesos
# aleatorios no hay sumidero: el primer token recibe de media en torno a 0,3 del peso de cada fila
# posterior, cerca del 0,29 que daría un reparto uniforme entre los tokens visibles, y la fila 1
# pone todo su peso en el primer token solo porque la máscara causal no le deja ningún otro.

# %% [markdown] lang="da"
# ## Attention-kort med og uden gate
#
# Lagene med fuld attention i Qwen3-Next er [gated attention](../../glossary/gated-attention/):
# outputtet fra hvert hoved ganges, inden det når outputprojektionen, med en sigmoid-gate, der
# beregnes ud fra tokenet. Gaten virker efter softmax, så den ændrer ikke attention-vægtene. Cellen
# bygger et
# `GatedAttention`-lag med tilfældige parametre og to hoveder med bredden 8, anvender det på seks
# tokens og beregner attention-vægtene med lagets egne projektioner (`split_query_gate` tager
# forespørgslerne ud af outputtet fra `q_proj`). Den kontrollerer, at attention-vægtene og
# hovedernes gates giver
# lagets output, og tegner attention-vægtene. De samme forespørgsler og nøgler uden gate giver det
# samme kort. Med tilfældige parametre er der ingen attention sink: det første token får i
# gennemsnit omkring 0,3 af vægten i hver senere række, tæt på de 0,29, en ligefordeling over de
# synlige tokens ville give. I række 1 ligger hele vægten på det første token, men kun fordi den
# kausale maske ikke giver rækken andre muligheder.

# %% alt={"en": "Two heatmaps of attention weights, head 1 and head 2 of a random gated attention layer, over six tokens, the first of them <bos>. Both are lower triangular; row 1 has weight 1.00 on <bos>, and the later rows put their largest weight on different tokens (at most 0.76: on <bos> in row 2 and on \"the\" in row 3 of head 2, and 0.62 on \"cat\" in row 3 of head 1), so no column stands out across the rows.", "es": "Dos mapas de calor de pesos de atención, las cabezas 1 y 2 de una capa aleatoria de atención con puertas, sobre seis tokens, el primero de ellos <bos>. Los dos son triangulares inferiores; la fila 1 tiene peso 1,00 en <bos>, y las demás filas ponen su mayor peso en tokens distintos (como mucho 0,76: en <bos> en la fila 2 y en «the» en la fila 3 de la cabeza 2, y 0,62 en «cat» en la fila 3 de la cabeza 1), de modo que ninguna columna destaca a lo largo de las filas.", "da": "To heatmaps med attention-vægte for seks tokens, hvoraf det første er <bos>: hoved 1 og hoved 2 i et tilfældigt gated-attention-lag. Begge er nedre trekantsmatricer. Række 1 har vægten 1,00 på <bos>, og de senere rækker lægger deres største vægt på forskellige tokens (højst 0,76: på <bos> i række 2 og på \"the\" i række 3 i hoved 2, og 0,62 på \"cat\" i række 3 i hoved 1), så ingen søjle skiller sig ud på tværs af rækkerne."}
torch.manual_seed(0)
tokens = ["<bos>", "the", "cat", "sat", "on", "it"]
T, d_model, h = len(tokens), 16, 2  # d_k = 8
layer = GatedAttention(d_model, h)
x = torch.randn(1, T, d_model)
with torch.no_grad():
    q, gate = split_query_gate(layer.q_proj(x), h)  # (1, T, h, d_k)
    k = layer.k_proj(x).view(1, T, h, -1)
    v = layer.v_proj(x).view(1, T, h, -1)
future = torch.ones(T, T, dtype=torch.bool).triu(1)


def weights_of(q, k):
    """(1, T, h, d_k) each -> the causal softmax weights (h, T, T)."""
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / q.size(-1) ** 0.5
    return scores.masked_fill(future, float("-inf")).softmax(-1)[0]


random_weights = weights_of(q, k)
heads = (random_weights @ v[0].transpose(0, 1)).transpose(0, 1)  # T,h,d_k
gated = (heads * gate[0].sigmoid()).flatten(1)
with torch.no_grad():  # the layer itself, before o_proj is applied
    same = torch.allclose(layer.o_proj(gated), layer(x)[0], atol=1e-6)
print("these weights, gated, are the layer's output:", same)
assert same
print("gates of head 1 and 2, mean:",
      [round(g, 2) for g in gate[0].sigmoid().mean((0, 2)).tolist()])
print("weight on <bos>, rows 2 to 6, per head:",
      [round(w, 2) for w in random_weights[:, 1:, 0].mean(-1).tolist()])
plot_heads(random_weights, tokens, tokens)

# %% [markdown] lang="en"
# ## Saying "nothing here"
#
# A softmax row always sums to 1, so a head that has nothing to add for a token must put its weight
# somewhere and still returns something. The usual way for a head without a gate to return almost
# nothing is to put the weight on a key whose value is near zero (the values it attends to could
# also cancel out, or all be small). The cell builds such a head by hand
# (head 1): the first token's key lies along a direction that every query shares, and its value is
# zero. Its map has the sink's column on the first token, with 0.95 to 1.0 of every later row, and
# its output is about 60 times smaller than that of the same head with its random weights. A gated
# head has a second way (head 2 here: head 1 of the random layer above, with its weights, no sink,
# and a gate set by hand near zero, $\sigma(-6) \approx 0.0025$, where the layer's gates averaged
# about 0.5), which makes its output smaller still.
#
# Both heads are made by hand here; no training made them. In trained models, Xiao et al. (2023)
# found that the first tokens draw a large share of the attention, and Qiu et al. (2025) report that
# a head-specific sigmoid gate after SDPA mitigates this attention sink.

# %% [markdown] lang="es"
# ## Decir «aquí no hay nada»
#
# Una fila del softmax siempre suma 1, así que una cabeza que no tiene nada que aportar para un token
# tiene que poner su peso en alguna parte y devuelve algo de todos modos. Para no devolver casi
# nada, lo habitual en una cabeza sin puerta es poner el peso en una clave cuyo valor sea casi cero
# (también podrían anularse entre sí los valores a los que atiende, o ser todos pequeños). La celda
# construye a mano una cabeza así (la cabeza 1): la clave del primer token apunta en una dirección
# que comparten todas las consultas, y su valor es cero. Su mapa tiene la columna del sumidero en el
# primer token, que se lleva entre 0,95 y 1,0 del peso de cada fila posterior, y su salida es unas
# 60 veces menor que la de la misma cabeza con sus pesos aleatorios. Una cabeza con puerta tiene
# otra manera de hacerlo: cerrar la puerta. Aquí es la cabeza 2, la cabeza 1 de la capa aleatoria de
# antes, con los mismos pesos, sin sumidero y con una puerta fijada a mano en un valor cercano a
# cero, $\sigma(-6) \approx 0{,}0025$, cuando las puertas de la capa valían de media unos 0,5; así, su
# salida es aún menor.
#
# Aquí las dos cabezas están hechas a mano; no las ha producido ningún entrenamiento. En modelos
# entrenados, Xiao et al. (2023) observaron que los primeros tokens se llevan una parte grande de la
# atención, y Qiu et al. (2025) señalan que una puerta sigmoide propia de cada cabeza, aplicada
# después de SDPA, mitiga este sumidero de atención.

# %% [markdown] lang="da"
# ## At sige "her er intet"
#
# En række softmax-vægte summerer altid til 1, så et hoved, der ikke har noget at bidrage med for et
# token, skal lægge sin vægt et sted og returnerer alligevel noget. Skal et hoved uden gate
# returnere næsten ingenting, sker det som regel ved, at det lægger vægten på en nøgle, hvis værdi
# er tæt på nul (værdierne,
# det ser på, kunne også ophæve hinanden eller alle være små). Cellen bygger sådan et hoved manuelt
# (hoved 1): det første tokens nøgle peger i en retning, som alle forespørgsler har til fælles, og
# værdien for dette token er nul. Kortet har en lys søjle ved det første token, sink-tokenet, med
# 0,95 til 1,0 af vægten i hver senere række, og outputtet er kun omkring 1/60 så stort som
# outputtet fra det samme hoved med de tilfældige parametre. Et hoved med gate har en anden udvej:
# det kan lukke gaten. Her er det hoved 2, som er hoved 1 fra det tilfældige lag ovenfor, med de
# samme parametre og ingen attention sink, men med en gate, der manuelt er sat tæt på nul,
# $\sigma(-6) \approx 0{,}0025$, mens lagets gates i gennemsnit lå omkring 0,5. Den lukkede gate gør
# outputtet endnu mindre.
#
# Begge hoveder er lavet manuelt her; ingen træning har frembragt dem. I trænede modeller fandt Xiao
# et al. (2023), at de første tokens trækker en stor del af attention til sig, og Qiu et al. (2025)
# skriver, at en sigmoid-gate pr. hoved efter SDPA dæmper denne attention sink.

# %% alt={"en": "Two heatmaps of attention weights over six tokens, the first of them <bos>. Head 1, made by hand without a gate: every row puts 0.95 to 1.00 of its weight on <bos>, a bright first column. Head 2, head 1 of the random gated layer above with its gate set by hand to σ(−6): the same weights as there, with no bright column (its largest weight after row 1 is 0.62, on \"cat\" in row 3).", "es": "Dos mapas de calor de pesos de atención sobre seis tokens, el primero de ellos <bos>. La cabeza 1, hecha a mano y sin puerta: cada fila pone entre 0,95 y 1,00 de su peso en <bos>, una primera columna brillante. La cabeza 2, la cabeza 1 de la capa aleatoria con puertas de antes, con su puerta fijada a mano en σ(−6): los mismos pesos que allí, sin ninguna columna brillante (su mayor peso después de la fila 1 es 0,62, en «cat» en la fila 3).", "da": "To heatmaps med attention-vægte for seks tokens, hvoraf det første er <bos>. Hoved 1, lavet manuelt uden gate: hver række lægger 0,95 til 1,00 af vægten på <bos>, en lys første søjle. Hoved 2, hoved 1 fra det tilfældige gated-attention-lag ovenfor med gaten manuelt sat til σ(−6): de samme vægte som dér og ingen lys søjle (den største vægt efter række 1 er 0,62, på \"cat\" i række 3)."}
u = torch.nn.functional.normalize(torch.randn(8), dim=0)  # shared direction
q_sink = q[..., :1, :] + 4 * u  # head 1's queries, (1, T, 1, d_k)
k_sink, v_sink = k[..., :1, :].clone(), v[..., :1, :].clone()
k_sink[0, 0, 0] = 4 * u  # the first token's key: along u
v_sink[0, 0, 0] = 0.0  # ... and its value: zero
sink_weights = weights_of(q_sink, k_sink)[0]  # (T, T)
no_gate = sink_weights @ v_sink[0, :, 0]  # (T, d_k): no gate
closed = (random_weights[0] @ v[0, :, 0]) * torch.sigmoid(
    torch.tensor(-6.0))  # head 1 of the layer above, gate set to sigma(-6)
plain = random_weights[0] @ v[0, :, 0]  # the same head, no gate

print("weight on <bos>, rows 2 to 6:",
      [round(w, 2) for w in sink_weights[1:, 0].tolist()])
norms = {name: o[1:].norm(dim=-1).mean().item() for name, o in
         [("plain", plain), ("sink", no_gate), ("gate", closed)]}
print("mean output norm, rows 2 to 6:",
      ", ".join(f"{n} {x:.4f}" for n, x in norms.items()))
assert (sink_weights[1:, 0] > 0.9).all()
assert norms["gate"] < norms["sink"] < 0.2 * norms["plain"]
plot_heads(torch.stack([sink_weights, random_weights[0]]), tokens, tokens)
