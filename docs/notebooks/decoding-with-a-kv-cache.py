# %% [markdown] lang="en"
# # Decoding with a KV cache
#
# A decoder generates text one token at a time, and each new token attends to every token before
# it. This notebook runs one causal self-attention layer the way a decoder does: a *prefill* over
# the prompt, then decode steps of one token each, with a KV cache that keeps the keys and values
# computed so far. It prints the cache after every step, draws the attention of each generated
# token, times a cached step against recomputing the whole prefix, and ends with the rolling
# buffer of sliding-window attention, where the cache stops growing.
#
# The code is the site's own, from the glossary entries on the KV cache and on sliding-window
# attention. Nothing is trained: random vectors stand in for the tokens' embeddings, so the
# heatmaps show the mechanics (which keys each token can see), not learned patterns.

# %% [markdown] lang="es"
# # Decodificación con caché KV
#
# Un decodificador genera texto token a token, y cada token nuevo atiende a todos los anteriores.
# Este cuaderno ejecuta una capa de autoatención causal como lo hace un decodificador: la fase de
# *prefill* (procesamiento del *prompt*) y, después, pasos de decodificación de un token cada uno, con una caché KV que
# guarda las claves y los valores calculados hasta el momento. Imprime la caché tras cada paso,
# dibuja la atención de cada token generado, compara el tiempo de un paso que usa la caché con el de
# uno que vuelve a calcular todo el prefijo y termina con el búfer circular de la atención de
# ventana deslizante, en
# el que la caché deja de crecer.
#
# El código es el del propio sitio, tomado de las entradas del glosario sobre la caché KV y la
# atención de ventana deslizante. No se entrena nada: unos vectores aleatorios hacen las veces de
# embeddings de los tokens, de modo que los mapas de calor muestran el mecanismo (qué claves puede ver
# cada token), no patrones aprendidos.

# %% [markdown] lang="da"
# # Afkodning med en KV-cache
#
# En decoder genererer tekst ét token ad gangen, og hvert nyt token beregner attention over alle
# tokens før det. Denne notebook kører ét kausalt self-attention-lag, sådan som en decoder gør: et
# prefill over prompten og derefter afkodningstrin med ét token hver, med en KV-cache, som gemmer
# de nøgler og værdier, der er beregnet indtil nu. Den udskriver cachen efter hvert trin, tegner
# attention-vægtene for hvert genereret token og måler tiden for et trin med cache og for en
# genberegning af hele præfikset. Til sidst viser den ringbufferen i sliding-window attention, hvor
# cachen holder op med at vokse.
#
# Koden er sitets egen, fra ordlisteopslagene om KV-cachen og sliding-window attention. Her trænes
# intet: tilfældige vektorer står i stedet for tokens' embeddings, så heatmappene viser mekanikken
# (hvilke nøgler hvert token kan se), ikke lærte mønstre.

# %%
# --8<-- "snippets/kv_cache.py:code"
# --8<-- "docs/notebooks/_heatmaps.py:code"

# %% [markdown] lang="en"
# ## The layer and the prompt
#
# One layer of width 16 with two query heads of width 8 that share one key/value head, so the
# cache holds a single head per layer. The sequence has 8 positions: a prompt of 4 tokens, then 4
# generated ones. In a real model each generated token is sampled from the output and embedded
# before the next step; here the inputs of all 8 positions are drawn at the start, which changes
# nothing about the attention.

# %% [markdown] lang="es"
# ## La capa y el *prompt*
#
# Se usa una capa de ancho 16 con dos cabezas de consulta de ancho 8 que comparten una sola cabeza
# de clave y valor, de modo que la caché guarda una única cabeza por capa. La secuencia tiene ocho
# posiciones: un *prompt* de cuatro tokens y cuatro tokens generados. En un modelo real, cada token
# generado se muestrea a partir de la salida y se convierte en embedding antes del paso siguiente;
# aquí las entradas de las ocho posiciones se generan todas al azar al principio, lo que no afecta
# en nada a la atención.

# %% [markdown] lang="da"
# ## Laget og prompten
#
# Ét lag med bredden 16 og to forespørgselshoveder med bredden 8, der deler ét nøgle/værdi-hoved, så
# cachen rummer et enkelt hoved pr. lag. Sekvensen har 8 positioner: en prompt på 4 tokens og
# derefter 4 genererede. I en trænet model trækkes hvert genereret token fra den
# sandsynlighedsfordeling, outputtet giver, og gøres til en embedding før næste trin; her vælges
# inputtet til alle 8 positioner tilfældigt på forhånd, og det ændrer intet ved attention.

# %%
torch.manual_seed(0)
prompt_len, generated = 4, 4
attn = CachedCausalSelfAttention(d_model=16, num_heads=2, num_kv_heads=1)
attn = attn.eval()
x = 2.0 * torch.randn(1, prompt_len + generated, 16)  # (B, T, d_model)
print("layer: h =", attn.h, " G =", attn.h_kv, " d_k =", attn.d_k)
print("inputs (B, T, d_model):", tuple(x.shape))

# %% [markdown] lang="en"
# ## Prefill
#
# The prompt goes through the layer in one call, as in training: 4 queries, 4 keys, the causal
# mask. The layer writes the 4 keys and values into the cache.

# %% [markdown] lang="es"
# ## La fase de *prefill*
#
# El *prompt* pasa por la capa en una sola llamada, como en el entrenamiento: cuatro consultas,
# cuatro claves y la máscara causal. La capa escribe en la caché las cuatro claves y los cuatro
# valores.

# %% [markdown] lang="da"
# ## Prefill
#
# Prompten kører gennem laget i ét kald, som under træningen: 4 forespørgsler, 4 nøgler og den
# kausale maske. Laget skriver de 4 nøgler og værdier i cachen.

# %%
cache = KVCache()
with torch.no_grad():
    outputs = [attn(x[:, :prompt_len], cache, offset=0)]  # (B, 4, d_model)
print("cached keys (B, G, T, d_k):", tuple(cache.k.shape))
print("cached values (B, G, T, d_k):", tuple(cache.v.shape))

# %% [markdown] lang="en"
# ## Decode, one token per step
#
# Each step passes only the newest token. The layer projects it to one query, one key and one
# value, appends the key and the value to the cache, and attends over everything cached: the
# cache grows by one position per step, and the new token sees all of them, so a single query
# needs no causal mask, and must not get `is_causal=True`: SDPA aligns that mask to the upper left,
# so the one query would see only the first position. {{ claim:sdpa-is-causal-upper-left }} At the
# end, the steps together must give what one causal pass over all 8 tokens gives, up to float32
# rounding.

# %% [markdown] lang="es"
# ## Decodificación, un token por paso
#
# En cada paso se pasa solo el token más reciente. La capa lo convierte, mediante sus proyecciones, en una consulta, una clave y
# un valor, añade la clave y el valor a la caché y atiende a todo lo guardado. La caché crece una
# posición por paso y el token nuevo ve todas las posiciones, de modo que una única consulta no
# necesita máscara causal. Tampoco debe pasarse `is_causal=True`: SDPA alinea esa máscara con la
# esquina superior izquierda, con lo que esa única consulta solo vería la primera posición.
# {{ claim:sdpa-is-causal-upper-left }} Al final, los pasos juntos deben dar lo mismo que una sola
# pasada causal sobre los ocho tokens, salvo por el redondeo en float32.

# %% [markdown] lang="da"
# ## Afkodning, ét token pr. trin
#
# I hvert trin får laget kun det nyeste token. Laget projicerer tokenet til én forespørgsel, én
# nøgle og én værdi, føjer nøglen og værdien til cachen og beregner attention over alt det gemte:
# cachen vokser med én position pr. trin, og det nye token ser dem alle, så en enkelt forespørgsel
# har ikke brug for nogen kausal maske. `is_causal=True` må man ikke angive: SDPA justerer masken
# mod øverste venstre hjørne, så forespørgslen kun ville se den første position.
# {{ claim:sdpa-is-causal-upper-left }} Til sidst skal trinnene tilsammen give det samme som ét
# kausalt gennemløb over alle 8 tokens, bortset fra afrundingsforskelle i float32.

# %%
with torch.no_grad():
    for step, t in enumerate(range(prompt_len, prompt_len + generated), 1):
        # (B, 1, d_model)
        outputs.append(attn(x[:, t : t + 1], cache, offset=t))
        shape = tuple(cache.k.shape)
        print(f"step {step}: token {t + 1} in, cache (B, G, T, d_k) = {shape}")
    decoded = torch.cat(outputs, dim=1)  # (B, 8, d_model)
    same = torch.allclose(decoded, attn(x), atol=1e-6)
print("prefill + decode steps == one causal pass:", same)
assert same

# %% [markdown] lang="en"
# ## What each generated token attends to
#
# The weights of the 4 generated tokens (rows) over the 8 positions (columns), one heatmap per
# head, recomputed from the layer's query projection and the cached keys. Token 5 spreads its
# weight over positions 1 to 5, token 8 over all 8; the cells to the right of each token's own
# position are 0 because those keys did not exist yet when it was decoded. The check multiplies
# these weights by the cached values and gets the decode steps' outputs back.

# %% [markdown] lang="es"
# ## A qué atiende cada token generado
#
# La celda dibuja los pesos de los cuatro tokens generados (filas) sobre las ocho posiciones
# (columnas), con un mapa de calor por cabeza, y los calcula de nuevo a partir de la proyección de
# consulta de la capa y de las claves guardadas. El token 5 reparte su peso entre las posiciones de
# la 1 a la 5, y el 8, entre las ocho; las celdas a la derecha de la posición de cada token valen 0,
# porque
# esas claves aún no existían cuando se decodificó ese token. La comprobación multiplica estos pesos
# por los valores guardados y recupera las salidas de los pasos de decodificación.

# %% [markdown] lang="da"
# ## Hvad hvert genereret token ser på
#
# Heatmappene viser attention-vægtene for de 4 genererede tokens (rækker) over de 8 positioner
# (søjler), ét heatmap pr. hoved. Vægtene er beregnet igen ud fra lagets forespørgselsprojektion og
# de gemte nøgler. Token 5 fordeler sin vægt over position 1 til 5, token 8 over alle 8; cellerne
# til højre for hvert tokens egen position er 0, fordi disse nøgler ikke fandtes endnu, da tokenet
# blev afkodet. Kontrollen ganger vægtene med de gemte værdier og får afkodningstrinnenes output
# tilbage.

# %% alt={"en": "Two heatmaps, one per head, of the attention weights of generated tokens 5 to 8 (rows) over positions 1 to 8 (columns): a staircase in which token 5 uses positions 1 to 5 and each later token one position more, and every cell right of a token's own position is 0.", "es": "Dos mapas de calor, uno por cabeza, con los pesos de atención de los tokens generados del 5 al 8 (filas) sobre las posiciones de la 1 a la 8 (columnas): una escalera en la que el token 5 usa las posiciones de la 1 a la 5 y cada token posterior, una posición más; todas las celdas a la derecha de la posición de cada token valen 0.", "da": "To heatmaps, ét pr. hoved, med attention-vægtene for de genererede tokens 5 til 8 (rækker) over position 1 til 8 (søjler): en trappe, hvor token 5 bruger position 1 til 5 og hvert senere token én position mere, og alle celler til højre for et tokens egen position er 0."}
with torch.no_grad():
    b, total, _ = x.shape
    new = x[:, prompt_len:]  # the 4 generated tokens, (B, 4, d_model)
    q = attn.w_q(new).view(b, generated, attn.h, attn.d_k).transpose(1, 2)
    k = cache.k.repeat_interleave(attn.h // attn.h_kv, dim=1)  # (B, h, 8, d_k)
    v = cache.v.repeat_interleave(attn.h // attn.h_kv, dim=1)
    scores = (q * attn.d_k**-0.5) @ k.transpose(-2, -1)  # (B, h, 4, 8)
    seen = causal_mask_at(generated, total, offset=prompt_len)  # (4, 8)
    weights = scores.masked_fill(~seen, float("-inf")).softmax(dim=-1)
    heads = (weights @ v).transpose(1, 2)
    heads = heads.reshape(b, generated, attn.h * attn.d_k)
    same = torch.allclose(attn.w_o(heads), decoded[:, prompt_len:], atol=1e-6)
print("weights (B, h, generated, positions):", tuple(weights.shape))
print("weights @ cached values == decode outputs:", same)
assert same
positions = [str(j + 1) for j in range(total)]
plot_heads(weights[0], positions[prompt_len:], positions)

# %% [markdown] lang="en"
# ## Cached or recomputed: the cost of a step
#
# Without a cache, generating the token at position $t$ means running all $t$ tokens through the
# layer again ($L = S = t$). With the cache, the step runs one token ($L = 1$) against the $t$
# cached keys. The cell times both for contexts of 16 to 512 tokens, on a wider layer and one CPU
# thread, and keeps the fastest of a few runs. The numbers depend on the machine and change from
# run to run, so the notebook prints none of them; the plot shows their shape. The recomputed step
# grows with the context, since every token is projected again and every query attends to every
# earlier key, while the cached step stays almost flat: its projections touch one token. Only the
# attention reads the longer cache, and so does this simple cache's `torch.cat`, which copies it on
# every append. {{ claim:tensor-cat-copies }}

# %% [markdown] lang="es"
# ## Con caché o sin ella: el coste de un paso
#
# Sin caché, generar el token de la posición $t$ supone volver a pasar los $t$ tokens por la capa
# ($L = S = t$). Con la caché, el paso procesa un solo token ($L = 1$), que atiende a las $t$
# claves guardadas. La celda mide ambos casos para contextos de 16 a 512 tokens, con una capa más ancha y
# un solo hilo de CPU, y se queda con la más rápida de unas pocas ejecuciones. Las cifras dependen
# de la máquina y cambian de una ejecución a otra, por lo que el cuaderno no imprime ninguna; la
# gráfica muestra cómo evolucionan. El tiempo del paso que lo recalcula todo crece con el contexto,
# porque se vuelve a proyectar cada token y cada consulta atiende a todas las claves anteriores,
# mientras que el del paso con caché apenas cambia: sus proyecciones procesan un solo token. La
# caché, cada vez más larga,
# solo la leen la atención propiamente dicha y la llamada a `torch.cat` de esta caché sencilla, que la
# copia entera cada vez que se le añade una posición. {{ claim:tensor-cat-copies }}

# %% [markdown] lang="da"
# ## Med cache eller forfra: prisen for et trin
#
# Uden cache betyder genereringen af tokenet på position $t$, at alle $t$ tokens skal gennem laget
# igen ($L = S = t$). Med cachen behandler trinnet kun ét token ($L = 1$), og dets forespørgsel
# beregner attention over de $t$ gemte nøgler. Cellen tager tid på begge dele for kontekster på 16
# til 512 tokens, med et bredere lag og én CPU-tråd, og beholder den hurtigste af nogle få kørsler.
# Tallene afhænger af maskinen og varierer fra kørsel til kørsel, så notebooken udskriver ingen af
# dem; grafen viser kurvernes forløb. Tiden for det trin, der beregnes forfra, vokser med
# konteksten, fordi hvert token projiceres igen, og hver forespørgsel beregner attention over alle
# tidligere nøgler. Trinnet med cache tager derimod næsten lige lang tid, uanset konteksten. Dets
# projektioner behandler kun ét token, og kun selve attention-beregningen og `torch.cat` læser den
# voksende cache; i denne enkle cache kopierer `torch.cat` alle gemte positioner ved hver
# tilføjelse.
# {{ claim:tensor-cat-copies }}

# %% alt={"en": "A line plot on a logarithmic context axis from 16 to 512 tokens, milliseconds per generated token on the vertical axis: the step that recomputes the whole prefix (L = S = t) rises steeply with the context, while the cached step (L = 1, S = t) stays close to flat and far below it at long contexts.", "es": "Una gráfica de líneas con el contexto en escala logarítmica, de 16 a 512 tokens, y los milisegundos por token generado en el eje vertical: el paso que vuelve a calcular todo el prefijo (L = S = t) sube deprisa con el contexto, mientras que el paso con caché (L = 1, S = t) se mantiene casi plano y muy por debajo en los contextos largos.", "da": "Et linjediagram med konteksten på en logaritmisk akse fra 16 til 512 tokens og millisekunder pr. genereret token på den lodrette akse: trinnet, der beregner hele præfikset forfra (L = S = t), stiger stejlt med konteksten, mens kurven for trinnet med cache (L = 1, S = t) er næsten vandret og ligger langt under den anden kurve ved lange kontekster."}
import time

import matplotlib.pyplot as plt


def fastest(fn, repeats=5):
    """The shortest of a few runs of fn(), in milliseconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


threads = torch.get_num_threads()
torch.set_num_threads(1)  # one CPU thread: steadier timings
torch.manual_seed(1)
wide = CachedCausalSelfAttention(d_model=256, num_heads=8).eval()
contexts = [16, 32, 64, 128, 256, 512]
recomputed, cached = [], []
with torch.no_grad():
    for t in contexts:
        tokens = torch.randn(1, t, 256)
        recomputed.append(fastest(lambda: wide(tokens)))  # L = S = t
        prefix = KVCache()
        # keys and values of t - 1 tokens
        wide(tokens[:, : t - 1], prefix, offset=0)

        def step():
            # a fresh copy, so every run sees t - 1 cached tokens
            grown = KVCache()
            grown.append(prefix.k, prefix.v)
            wide(tokens[:, t - 1 :], grown, offset=t - 1)  # L = 1, S = t

        cached.append(fastest(step))
torch.set_num_threads(threads)
print("contexts timed:", contexts)
fig, ax = plt.subplots(figsize=(5.2, 3.2))
ax.plot(contexts, recomputed, "o-", label="$L = S = t$")
ax.plot(contexts, cached, "s-", label="$L = 1,\\ S = t$")
ax.set_xscale("log", base=2)
ax.set_xticks(contexts, [str(t) for t in contexts])
ax.set_xlabel("$t$")
ax.set_ylabel("ms")
ax.set_ylim(bottom=0)
ax.set_title("CachedCausalSelfAttention(d_model=256, num_heads=8)", fontsize=8)
ax.legend()
plt.show()

# %% [markdown] lang="en"
# ## A sliding window: the rolling buffer
#
# With sliding-window attention each query sees only the last $W$ positions, its own included,
# so a decoder that adds one token per step never needs a key older than that: the cache can be a
# buffer of $W$ slots in which position $t$ overwrites position $t - W$. (A chunk of $C$ tokens in
# one step needs $W - 1 + C$ keys during that step, more than the buffer holds.) The next cells
# decode the same 8 tokens one at a time with a window of $W = 3$, using the same layer's projections, and print which positions the
# slots hold after each step (counted from 1). Once the buffer has wrapped, the slots are out of
# position order, which attention does not mind: RoPE rotated each key for its position before
# it was cached. (A bias computed with the scores, as ALiBi's or T5's, would have to read each
# slot's position from the buffer, not its index.) The decoded outputs must equal windowed
# attention over all 8 tokens at once.

# %% [markdown] lang="es"
# ## Con ventana deslizante: el búfer circular
#
# Con la atención de ventana deslizante, cada consulta solo ve las últimas $W$ posiciones, incluida
# la suya. Como un decodificador que añade un token por paso nunca necesita una clave anterior a
# esas $W$ posiciones, la caché puede ser un búfer de $W$ huecos en el que la posición $t$
# sobrescribe la posición $t - W$. (Un trozo de $C$ tokens procesado en un solo paso necesita
# $W - 1 + C$ claves durante ese paso, más de las que caben en el búfer). Las celdas siguientes
# decodifican los mismos ocho tokens uno a uno con una ventana de $W = 3$ y las proyecciones de la
# misma capa, e imprimen qué posición guarda cada hueco tras cada paso (contando desde 1).
# Cuando el búfer ha dado la vuelta, los huecos ya no siguen el orden de las posiciones, algo que a
# la atención no le importa: RoPE ya ha girado cada clave según su posición antes de guardarla en
# la caché. (Un sesgo que se calcula junto con las puntuaciones, como el de ALiBi o el de T5,
# tendría que leer en el búfer la posición de cada hueco, no deducirla de su índice). Las salidas
# decodificadas deben coincidir con las de la atención de ventana deslizante aplicada a los ocho
# tokens a la vez.

# %% [markdown] lang="da"
# ## Med et glidende vindue: ringbufferen
#
# Med sliding-window attention ser hver forespørgsel kun de sidste $W$ positioner, sin egen
# medregnet, så en decoder, der tilføjer ét token pr. trin, har aldrig brug for en ældre nøgle:
# cachen kan være en buffer med $W$ pladser, hvor position $t$ overskriver position $t - W$. (En
# bid på $C$ tokens, der behandles i ét trin, har i det trin brug for $W - 1 + C$ nøgler, og det er
# flere, end bufferen kan rumme.)
# De næste celler afkoder de samme 8 tokens ét ad gangen med et vindue på $W = 3$ og det samme lags
# projektioner, og de udskriver, hvilke positioner pladserne rummer efter hvert trin (talt fra 1).
# Når bufferen er gået rundt, ligger pladserne ikke længere i positionsrækkefølge, og det gør ingen
# forskel for attention: RoPE har allerede drejet hver nøgle efter dens position, før den blev gemt
# i cachen. (En bias, der beregnes sammen med scorerne, som i ALiBi eller T5, ville skulle læse
# positionen for hver plads i bufferen i stedet for at bruge pladsens indeks.) De afkodede output
# skal være lig med vinduesbegrænset attention over alle 8 tokens på én gang.

# %%
# --8<-- "snippets/sliding_window_attention.py:code"
# --8<-- "snippets/sliding_window_attention.py:rolling"

# %% alt={"en": "Two heatmaps, one per head, of the attention weights of tokens 1 to 8 (rows) over positions 1 to 8 (columns) with a window of 3: a band along the diagonal in which each token uses only its own position and the two before it, and every other cell is 0.", "es": "Dos mapas de calor, uno por cabeza, con los pesos de atención de los tokens 1 a 8 (filas) sobre las posiciones 1 a 8 (columnas) con una ventana de 3: una banda a lo largo de la diagonal en la que cada token usa solo su propia posición y las dos anteriores, y todas las demás celdas valen 0.", "da": "To heatmaps, ét pr. hoved, med attention-vægtene for token 1 til 8 (rækker) over position 1 til 8 (søjler) med et vindue på 3: et bånd langs diagonalen, hvor hvert token kun bruger sin egen position og de to før den, og alle andre celler er 0."}
window = 3
with torch.no_grad():
    b, total, _ = x.shape
    # q: (B, h, 8, d_k); k and v: (B, G, 8, d_k)
    q = attn.w_q(x).view(b, total, attn.h, attn.d_k).transpose(1, 2)
    k = attn.w_k(x).view(b, total, attn.h_kv, attn.d_k).transpose(1, 2)
    v = attn.w_v(x).view(b, total, attn.h_kv, attn.d_k).transpose(1, 2)
    buffer = RollingKVCache(b, attn.h_kv, window, attn.d_k)
    # the weights by position
    steps, banded = [], torch.zeros(attn.h, total, total)
    for t in range(total):
        out = decode_step(q[..., t : t + 1, :], k[..., t : t + 1, :],
                          v[..., t : t + 1, :], buffer)  # (B, h, 1, d_k)
        steps.append(out)
        # The weights this step used, over the buffer's slots, put back in
        # position order.
        # (B, h, W, d_k)
        keys = buffer.k.repeat_interleave(attn.h // attn.h_kv, dim=1)
        query = q[..., t : t + 1, :] * attn.d_k**-0.5
        slot_scores = query @ keys.transpose(-2, -1)
        filled = buffer.pos >= 0
        slot_scores = slot_scores.masked_fill(~filled, float("-inf"))
        slot_weights = slot_scores.softmax(dim=-1)
        banded[:, t, buffer.pos[filled]] = slot_weights[0, :, 0, filled]
        # positions counted from 1
        held = [p + 1 for p in buffer.pos.tolist() if p >= 0]
        print(f"step {t + 1}: slots hold positions {held}")
    rolled = torch.cat(steps, dim=-2)  # (B, h, 8, d_k)
    windowed = F.scaled_dot_product_attention(
        q, k, v, attn_mask=sliding_window_mask(total, window=window),
        enable_gqa=True,
    )
print("buffer (B, G, W, d_k):", tuple(buffer.k.shape))
same = torch.allclose(rolled, windowed, atol=1e-6)
print("rolling buffer == windowed attention over all tokens:", same)
assert same and torch.allclose(banded.sum(-1), torch.ones(attn.h, total))
plot_heads(banded, positions, positions)
