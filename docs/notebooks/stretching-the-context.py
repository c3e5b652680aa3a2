# %% [markdown] lang="en"
# # Stretching the context
#
# A model with rotary position embeddings (RoPE) turns pair $c$ of a query or key at position $m$
# through the angle $m\theta_c$. Past the length it was trained on, the slow pairs reach angles it
# has never seen, and RoPE scaling changes the frequencies $\theta_c$ so that a longer context
# stays in the trained range. This notebook compares three methods with the glossary's own code, on
# a head with the dimensions of Llama 3 8B ($d_k = 128$, $\beta$ = `rope_theta` = 500,000, trained
# on $L = 8192$ positions) stretched four times, to 32,768: linear scaling (position
# interpolation), NTK-aware scaling and YaRN. It plots the new frequencies, the score between one
# query and keys further and further back, and the largest angle each pair reaches at four times
# the length.
#
# Nothing here is trained and no model is loaded: the query and key are random vectors, so the
# curves show what each method does to the positions, not how well a model reads the longer
# context. How well models do is reported from the papers.

# %% [markdown] lang="es"
# # Estirar el contexto
#
# Un modelo con embeddings de posición rotatorios (RoPE) gira el par $c$ de una consulta o de una
# clave situada en la posición $m$ un ángulo $m\theta_c$. Más allá de la longitud de entrenamiento,
# los pares lentos llegan a ángulos que el modelo nunca ha visto, y el escalado de RoPE cambia las
# frecuencias $\theta_c$ para que un contexto más largo se quede dentro del intervalo del
# entrenamiento. Este cuaderno compara tres métodos con el propio código del glosario, en una cabeza
# con los tamaños de Llama 3 8B ($d_k = 128$, $\beta$ = `rope_theta` = 500 000, entrenado con
# $L = 8192$ posiciones) estirada al cuádruple, hasta 32 768 posiciones: el escalado lineal
# (interpolación de posiciones), el escalado *NTK-aware* y YaRN. Dibuja las nuevas frecuencias, la
# puntuación de una consulta con claves cada vez más alejadas y el mayor ángulo al que llega cada
# par con una longitud cuatro veces mayor.
#
# Aquí no se entrena nada ni se carga ningún modelo: la consulta y la clave son vectores aleatorios,
# así que las curvas muestran lo que cada método hace con las posiciones, no si un modelo lee bien el
# contexto más largo. Lo que consiguen los modelos se toma de los artículos.

# %% [markdown] lang="da"
# # Når konteksten strækkes
#
# En model med rotary position embeddings (RoPE) drejer par $c$ i en forespørgsel eller nøgle på
# position $m$ vinklen $m\theta_c$. Ud over træningslængden når de langsomme par vinkler, modellen
# aldrig har set, og RoPE-skalering ændrer frekvenserne $\theta_c$, så en længere kontekst holder
# sig inden for intervallet fra træningen. Med ordlistens egen kode sammenligner denne notebook tre
# metoder på et hoved med de samme dimensioner som i Llama 3 8B ($d_k = 128$,
# $\beta$ = `rope_theta` = 500.000, trænet på $L = 8192$ positioner), strakt til fire gange længden,
# 32.768 positioner: lineær skalering (positionsinterpolation), *NTK-aware*-skalering og YaRN. Den
# tegner tre ting: de nye frekvenser, scoren mellem én forespørgsel og nøgler længere og længere
# tilbage og den største vinkel, hvert par når ved fire gange længden.
#
# Her trænes intet, og ingen model indlæses. Forespørgslen og nøglen er tilfældige vektorer, så
# kurverne viser, hvad hver metode gør ved positionerne, ikke hvor godt en model læser den længere
# kontekst. Hvor godt modeller klarer det, gengives fra artiklerne.

# %%
# --8<-- "snippets/rope_scaling.py:code"

# %%
import matplotlib.pyplot as plt

torch.manual_seed(0)
# Llama 3 8B's head: d_k = 128, rope_theta = 500000, trained on L = 8192.
d_k, beta, L, s = 128, 500000.0, 8192, 4.0
methods = {
    "none": {"rope_type": "default"},
    "linear": {"rope_type": "linear", "factor": s},
    # "ntk": the snippet's name for static NTK-aware scaling; Transformers
    # has no such rope_type (its "dynamic" grows the factor with length)
    "NTK": {"rope_type": "ntk", "factor": s},
    "YaRN": {"rope_type": "yarn", "factor": s,
             "original_max_position_embeddings": L},
}
style = {"none": "-", "linear": "--", "NTK": "-", "YaRN": ":"}

# %% [markdown] lang="en"
# ## The frequencies, pair by pair
#
# `scaled_frequencies` reads each method from a `rope_scaling` dictionary and returns the new
# frequencies $\theta'_c$ and the attention factor. `linear` and `yarn` are Transformers'
# `rope_type` values; static NTK-aware scaling has none, and `"ntk"` is the glossary code's own name
# for it (Transformers' `dynamic` type uses the same larger base, with a factor that grows with the
# length). The plot shows how many times more
# slowly each pair turns, $\theta_c / \theta'_c$, from the fastest pair ($c = 0$) to the slowest
# ($c = 63$); the dashed line marks pair 35, the first that turns less than once in $L = 8192$
# positions. Linear scaling makes every pair turn four times more slowly ($s = 4$), the fast ones
# too. NTK-aware scaling raises the base instead: the fastest pair is kept, the slowest is divided
# by exactly 4 and those in between by less. YaRN keeps the pairs that turn at least 32 times in
# $L$ positions (here the first 19), divides by 4 those that turn at most once (from pair 35 on)
# and blends the pairs in between; it also multiplies queries and keys by $t = 0.1 \ln s + 1$
# (Peng et al. write this factor $\sqrt{1/t}$, their $t$ being the softmax's temperature).

# %% [markdown] lang="es"
# ## Las frecuencias, par a par
#
# `scaled_frequencies` lee cada método de un diccionario `rope_scaling` y devuelve las nuevas
# frecuencias $\theta'_c$ y el factor de atención. `linear` y `yarn` son valores de `rope_type` en
# Transformers; el escalado *NTK-aware* estático no tiene ninguno, y `"ntk"` es el nombre que le da
# el código del glosario (el tipo `dynamic` de Transformers usa la misma base aumentada, pero con un
# factor que crece con la longitud). El gráfico muestra cuántas veces más despacio gira cada par,
# $\theta_c / \theta'_c$, desde el más rápido ($c = 0$) hasta el más lento ($c = 63$); la línea
# discontinua marca el par 35, el primero que da menos de una vuelta en $L = 8192$ posiciones. El
# escalado lineal hace girar todos los pares cuatro veces más despacio ($s = 4$), también los
# rápidos. El escalado *NTK-aware*, en cambio, aumenta la base: conserva el par más rápido, divide
# el más lento exactamente por 4 y los intermedios, por menos. YaRN conserva los pares que dan al
# menos 32 vueltas en $L$ posiciones (aquí, los 19 primeros), divide por 4 los que dan como mucho
# una (a partir del 35) e interpola los intermedios; además, multiplica las consultas y las claves
# por $t = 0{,}1 \ln s + 1$ (Peng et al. lo expresan como $\sqrt{1/t}$, donde su $t$ es la
# temperatura del softmax).

# %% [markdown] lang="da"
# ## Frekvenserne, par for par
#
# `scaled_frequencies` læser hver metode fra en `rope_scaling`-ordbog og returnerer de nye
# frekvenser $\theta'_c$ og attention-faktoren. `linear` og `yarn` er værdier af `rope_type` i
# Transformers. Statisk *NTK-aware*-skalering har ingen, og `"ntk"` er ordlistekodens eget navn for
# den (Transformers' type `dynamic` bruger den samme større base, men med en faktor, der vokser med
# længden). Diagrammet viser, hvor mange gange langsommere hvert par drejer, $\theta_c / \theta'_c$,
# fra det hurtigste par ($c = 0$) til det langsomste ($c = 63$). Den stiplede linje markerer par 35,
# det første, der drejer mindre end én omgang på $L = 8192$ positioner. Lineær skalering får alle
# par til at dreje fire gange langsommere ($s = 4$), også de hurtige. *NTK-aware*-skalering hæver i
# stedet basen: det hurtigste par beholdes, det langsomste divideres med præcis 4, og dem imellem
# med mindre. YaRN beholder de par, der drejer mindst 32 omgange på $L$ positioner (her de første
# 19), dividerer dem, der drejer højst én omgang (fra par 35), med 4 og interpolerer gradvist mellem
# de to regler for parrene imellem. Desuden ganger YaRN forespørgsler og nøgler med
# $t = 0{,}1 \ln s + 1$. Peng et al. skriver denne faktor som $\sqrt{1/t}$, fordi $t$ i artiklen er
# softmax-temperaturen.

# %% alt={"en": "A line chart of θ_c / θ'_c against the pair c from 0 to 63 for one head with d_k = 128 and s = 4, with a dashed line at pair 35. none: 1 for every pair. linear: 4 for every pair. NTK: rises smoothly from 1 at pair 0 to 4 at pair 63. YaRN: 1 up to pair 18, then rises steeply to 4 at pair 35 and stays at 4.", "es": "Gráfico de líneas de θ_c / θ'_c frente al par c, de 0 a 63, para una cabeza con d_k = 128 y s = 4, con una línea discontinua en el par 35. La curva sin escalado: 1 en todos los pares. La del escalado lineal: 4 en todos los pares. La de NTK sube de forma suave desde 1 en el par 0 hasta 4 en el 63. La de YaRN vale 1 hasta el par 18; después sube con fuerza hasta 4 en el par 35 y se queda en 4.", "da": "Kurvediagram over θ_c / θ'_c som funktion af parret c fra 0 til 63 for ét hoved med d_k = 128 og s = 4, med en stiplet linje ved par 35. none (uden skalering): 1 for alle par. linear: 4 for alle par. NTK: stiger jævnt fra 1 ved par 0 til 4 ved par 63. YaRN: 1 til og med par 18, stiger derefter stejlt til 4 ved par 35 og bliver på 4."}
theta = rope_frequencies(d_k, beta)  # (64,): theta_c, pair c from 0
freq, factor = {}, {}
for name, rope in methods.items():
    freq[name], factor[name] = scaled_frequencies(
        d_k, {**rope, "rope_theta": beta})
    print(f"{name:>6}: fastest pair / {theta[0] / freq[name][0]:.2f},",
          f"slowest / {theta[-1] / freq[name][-1]:.2f},",
          f"attention factor {factor[name]:.4f}")

turns = L * theta / (2 * math.pi)  # turns of pair c in L positions
first_slow = int((turns < 1).nonzero()[0])
print(f"pairs {first_slow} to {d_k // 2 - 1} turn less than once in {L}")
kept = freq["YaRN"][turns >= 32]
print("YaRN keeps the pairs turning 32 times or more:",
      torch.equal(kept, theta[turns >= 32]))

pairs = torch.arange(d_k // 2)
fig, ax = plt.subplots(figsize=(7, 2.8))
for name in methods:
    ax.plot(pairs, theta / freq[name], style[name], label=name)
ax.axvline(first_slow, ls="--", lw=0.8, color="gray")
ax.set_title(rf"one head, $d_k = {d_k}$, $s = {s:g}$")
ax.set_xlabel("pair $c$")
ax.set_ylabel(r"$\theta_c / \theta'_c$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown] lang="en"
# ## One query, keys further and further back
#
# The same query $q$ sits at the last of $4L$ = 32,768 positions, and the same key $k$ (close to
# $q$, so that the score is large at distance 0) at every position before it. With every method
# the score depends only on the distance $m - n$, which the cell checks by moving the query 1000
# positions back. On the left, near the query: with linear scaling the score at distance $4\delta$
# is the old score at distance $\delta$, so its curve is the unscaled one stretched four times, and
# neighboring tokens become harder to tell apart. NTK and YaRN keep the fast pairs, so near the
# query they oscillate like the unscaled curve; YaRN's attention factor multiplies every score by
# $t^2 \approx 1.30$. On the right, the whole range, as the average over each block of 256
# distances, with a dashed line at $L$. Unscaled, the average keeps falling past $L$, down to 3
# (for the distances from 27,648 to 27,903), far below anything it reached within $L$ (45 at the
# lowest). With the three methods it falls much less: from lowest values of 59, 51 and 75 within
# $L$ to lowest values of 37, 36 and 57 past it.

# %% [markdown] lang="es"
# ## Una consulta, claves cada vez más atrás
#
# La misma consulta $q$ está en la última de $4L$ = 32 768 posiciones, y la misma clave $k$
# (parecida a $q$, para que la puntuación sea alta a distancia 0) en cada una de las anteriores. Con
# cualquier método, la puntuación depende solo de la distancia $m - n$, y la celda lo comprueba
# desplazando la consulta 1000 posiciones hacia atrás. A la izquierda, cerca de la consulta: con el
# escalado lineal, la puntuación a la distancia $4\delta$ es la antigua a la distancia $\delta$, de
# modo que su curva es la curva sin escalado estirada al cuádruple, y los tokens vecinos se
# distinguen peor. NTK y YaRN conservan los pares rápidos, así que cerca de la consulta oscilan como
# la curva sin escalado; el factor de atención de YaRN multiplica cada puntuación por
# $t^2 \approx 1{,}30$. A la derecha, todo el intervalo, como la media de cada bloque de 256
# distancias, con una línea discontinua en $L$. Sin escalado, la media sigue bajando más allá de $L$
# hasta llegar a 3 (entre las distancias 27 648 y 27 903), muy por debajo de todo lo que alcanzó
# dentro de $L$ (donde el mínimo fue 45). Con los tres métodos baja mucho menos: sus mínimos pasan
# de 59, 51 y 75 dentro de $L$ a 37, 36 y 57 más allá.

# %% [markdown] lang="da"
# ## Én forespørgsel, nøgler længere og længere tilbage
#
# Den samme forespørgsel $q$ står på den sidste af $4L$ = 32.768 positioner, og den samme nøgle $k$
# (tæt på $q$, så scoren er stor ved afstand 0) står på hver position før den. Med alle metoder
# afhænger scoren kun af afstanden $m - n$, og det kontrollerer cellen ved at flytte forespørgslen
# 1.000 positioner tilbage. Til venstre ses området nær forespørgslen. Med lineær skalering er
# scoren ved afstanden $4\delta$ den gamle score ved afstanden $\delta$, så kurven er den uskalerede
# kurve strakt til fire gange bredden, og tokens, der står tæt på hinanden, bliver sværere at
# skelne. NTK og YaRN beholder de hurtige par, så tæt på forespørgslen svinger de som den uskalerede
# kurve, og YaRN's attention-faktor ganger hver score med $t^2 \approx 1{,}30$. Til højre ses hele
# intervallet som gennemsnittet over hver gruppe på 256 afstande, med en stiplet linje ved $L$. Uden
# skalering bliver gennemsnittet ved med at falde ud over $L$, helt ned til 3 (for afstandene fra
# 27.648 til 27.903), langt under noget, det nåede inden for $L$ (laveste værdi 45). Med de tre
# metoder falder det langt mindre: de laveste værdier er 59, 51 og 75 inden for $L$ og 37, 36 og 57
# ud over $L$.

# %% alt={"en": "Two line charts of the score of one query and key of one head against the distance m - n. Left, distances 0 to 256: none and NTK start at about 130 and oscillate quickly between about 60 and 130; linear starts at the same value and oscillates slowly; YaRN oscillates like none, higher, from about 170. Right, the average over each block of 256 distances from 0 to 32,768, with a dashed line at 8192: none starts at about 83 and, past 8192, falls to about 3 near distance 27,800; linear and NTK start at about 90 and 86 and fall past 8192 to lows of about 37 and 36; YaRN starts at about 109 and stays highest, with a low of about 57 past 8192.", "es": "Dos gráficos de líneas de la puntuación de una consulta y una clave de una cabeza frente a la distancia m − n. A la izquierda, distancias de 0 a 256: la curva sin escalado y la de NTK empiezan en unos 130 y oscilan deprisa entre unos 60 y 130; la del escalado lineal empieza en el mismo valor y oscila despacio; la de YaRN oscila como la curva sin escalado, más arriba, desde unos 170. A la derecha, la media de cada bloque de 256 distancias, de 0 a 32 768, con una línea discontinua en 8192: la curva sin escalado empieza en unos 83 y, más allá de 8192, baja hasta unos 3 cerca de la distancia 27 800; las del escalado lineal y de NTK empiezan en unos 90 y 86 y, más allá de 8192, bajan hasta mínimos de unos 37 y 36; la de YaRN empieza en unos 109 y sigue siendo la más alta, con un mínimo de unos 57 más allá de 8192.", "da": "To kurvediagrammer over scoren for én forespørgsel og nøgle i ét hoved som funktion af afstanden m − n. Til venstre afstandene 0 til 256: none (uden skalering) og NTK starter omkring 130 og svinger hurtigt mellem omkring 60 og 130; linear starter ved samme værdi og svinger langsomt; YaRN svinger som none, men højere, fra omkring 170. Til højre gennemsnittet over hver gruppe på 256 afstande fra 0 til 32.768 med en stiplet linje ved 8.192: none starter omkring 83 og falder ud over 8.192 til omkring 3 nær afstanden 27.800; linear og NTK starter omkring 90 og 86 og falder ud over 8.192 til laveste værdier omkring 37 og 36; YaRN starter omkring 109 og ligger hele vejen højest, med en laveste værdi omkring 57 ud over 8.192."}
q = torch.randn(d_k, dtype=torch.float64)
k = q + 0.3 * torch.randn(d_k, dtype=torch.float64)  # a key that matches q
dist = torch.arange(4 * L)  # distances 0 .. 4L - 1


def scores(name, query_at):
    """Score of q at query_at with k at query_at - dist, each rotated."""
    keys_at = query_at - dist
    q_m = rotate(q[None], torch.tensor([query_at]), freq[name],
                 factor[name])
    k_n = rotate(k.expand(len(dist), -1), keys_at, freq[name],
                 factor[name])
    return k_n @ q_m[0]  # (4L,)


last = 4 * L - 1
score = {name: scores(name, last) for name in methods}
for name in methods:
    same = torch.allclose(scores(name, last - 1000)[:-1000],
                          score[name][:-1000])
    print(f"{name:>6}: depends only on m - n:", same)
    assert same
quarter = torch.arange(0, 4 * L, 4)  # distances divisible by 4
same = torch.allclose(score["linear"][quarter], score["none"][:L])
print("linear at distance 4d == none at distance d:", same)
assert same

blocks = {name: score[name].view(-1, 256).mean(-1) for name in methods}
within = L // 256  # the blocks before L
low = {name: blocks[name][:within].min().item() for name in methods}
past = {name: blocks[name][within:].min().item() for name in methods}
print("mean over 256 distances, lowest before L and past L:",
      ", ".join(f"{n} {low[n]:.0f} {past[n]:.0f}" for n in methods))
deepest = within + int(blocks["none"][within:].argmin())
print(f"none: lowest block, distances {256 * deepest} to "
      f"{256 * deepest + 255}")
assert past["none"] < min(low.values())  # below anything within L
assert past["none"] < min(past[n] for n in methods if n != "none")

fig, axes = plt.subplots(1, 2, figsize=(10, 2.8))
near = slice(0, 257)
middle = torch.arange(128, 4 * L, 256)  # the middle of each block
for name in methods:
    axes[0].plot(dist[near], score[name][near], style[name], lw=1.0,
                 label=name)
    axes[1].plot(middle, blocks[name], style[name], lw=1.0, label=name)
axes[0].set_title(r"one head: $\tilde q_m \tilde k_n^\top$")
axes[1].set_title("one head: mean over 256 distances")
axes[1].axvline(L, ls="--", lw=0.8, color="gray")
for ax in axes:
    ax.set_xlabel("$m - n$")
axes[0].legend(fontsize=8)
plt.show()

# %% [markdown] lang="en"
# ## At four times the trained length
#
# In training, pair $c$ turned through angles from 0 to $(L - 1)\theta_c$, or through every angle if
# it completed a turn. At $4L$ positions it reaches $(4L - 1)\theta'_c$. The plot divides the second
# angle by the first, each capped at a full turn, $2\pi$: 1 means nothing new, 4 means four times
# the trained range. Unscaled, 28 slow pairs leave the trained range by more than 1%, by up to four
# times. Linear scaling and YaRN bring every pair back: the last of $4L$ positions, divided by 4, is
# $L - 1/4$, three quarters of a position past the last one seen, hence the ratio of 1.0001.
# NTK-aware scaling divides the slowest pair by exactly 4 but the slow pairs before it by less, so
# 27 of them still leave the trained range, by up to 1.73 times (pair 38).
#
# Whether a model then reads the longer context well depends on the model and on fine-tuning, which
# these curves cannot show.
# Chen et al. (2023) extended LLaMA to windows of up to 32,768 tokens with position interpolation
# and at most 1000 fine-tuning steps; Peng et al. (2023) fine-tuned Llama 2 models with YaRN to 64K
# and 128K tokens.

# %% [markdown] lang="es"
# ## Con una longitud cuatro veces mayor que la de entrenamiento
#
# Durante el entrenamiento, el par $c$ recorrió los ángulos de 0 a $(L - 1)\theta_c$, o todos los
# ángulos si llegó a dar una vuelta completa. Con $4L$ posiciones llega a $(4L - 1)\theta'_c$. El
# gráfico divide el segundo ángulo por el primero, ambos limitados a una vuelta completa, $2\pi$: 1
# significa que no aparece nada nuevo, y 4, cuatro veces el intervalo del entrenamiento. Sin
# escalado, 28 pares lentos rebasan ese intervalo en más de un 1 %, y algunos llegan a
# cuadruplicarlo. El escalado lineal y YaRN devuelven a él todos los pares: la última de $4L$
# posiciones, dividida por 4, es $L - 1/4$, tres cuartos de posición más allá de la última vista, y
# de ahí el cociente de 1,0001. El escalado *NTK-aware* divide el par más lento exactamente por 4,
# pero los pares lentos anteriores, por menos, así que 27 de ellos siguen rebasando el intervalo del
# entrenamiento, hasta llegar a 1,73 veces su amplitud (el par 38).
#
# Que un modelo lea luego bien el contexto más largo depende del modelo y del ajuste fino, y eso no
# lo pueden mostrar estas curvas.
# Chen et al. (2023) ampliaron la ventana de contexto de LLaMA hasta 32 768 tokens con la
# interpolación de posiciones y un ajuste fino de 1000 pasos como mucho; Peng et al. (2023)
# ajustaron con YaRN modelos Llama 2 a contextos de 65 536 y 131 072 tokens.

# %% [markdown] lang="da"
# ## Ved fire gange træningslængden
#
# Under træningen drejede par $c$ gennem vinklerne fra 0 til $(L - 1)\theta_c$, eller gennem alle
# vinkler, hvis det nåede en hel omgang. Ved $4L$ positioner når det $(4L - 1)\theta'_c$. Diagrammet
# dividerer den anden vinkel med den første, begge begrænset til en hel omgang, $2\pi$: 1 betyder
# intet nyt, og 4 betyder fire gange intervallet fra træningen. Uden skalering kommer 28 langsomme
# par mere end 1 % uden for intervallet, op til fire gange. Lineær skalering og YaRN bringer alle
# par tilbage: den sidste af $4L$ positioner divideret med 4 er $L - 1/4$, tre fjerdedele af en
# position efter den sidste, modellen har set, og deraf forholdet 1,0001. *NTK-aware*-skalering
# dividerer det langsomste par med præcis 4, men de langsomme par før det med mindre, så 27 af dem
# kommer stadig uden for intervallet fra træningen, op til 1,73 gange (par 38).
#
# Om en model derefter læser den længere kontekst godt, afhænger af modellen og af finjusteringen,
# og det kan disse kurver ikke vise.
# Chen et al. (2023) udvidede den første Llamas kontekstvindue til højst 32.768 tokens med
# positionsinterpolation og maksimalt 1.000 finjusteringstrin, og Peng et al. (2023) finjusterede
# Llama 2-modeller med YaRN til 64K og 128K tokens.

# %% alt={"en": "A line chart of the largest angle at 4L divided by the largest angle in training, each capped at a full turn, against the pair c from 0 to 63, with a dashed line at pair 35. linear and YaRN stay at 1 for every pair. none rises from 1 at pair 35 to 4 at pair 42 and stays at 4. NTK rises with it to about 1.7 at pair 38, then falls back to 1 at pair 63.", "es": "Gráfico de líneas del mayor ángulo con 4L dividido por el mayor ángulo del entrenamiento, ambos limitados a una vuelta completa, frente al par c, de 0 a 63, con una línea discontinua en el par 35. Las curvas del escalado lineal y de YaRN se quedan en 1 en todos los pares. La curva sin escalado sube de 1 en el par 35 a 4 en el par 42 y se queda en 4. La de NTK sube con ella hasta cerca de 1,7 en el par 38 y después vuelve a bajar hasta 1 en el par 63.", "da": "Kurvediagram over den største vinkel ved 4L divideret med den største vinkel under træningen, begge begrænset til en hel omgang, som funktion af parret c fra 0 til 63, med en stiplet linje ved par 35. linear og YaRN ligger på 1 for alle par. none (uden skalering) stiger fra 1 ved par 35 til 4 ved par 42 og bliver på 4. NTK stiger sammen med den til omkring 1,7 ved par 38 og falder derefter tilbage til 1 ved par 63."}
full_turn = torch.tensor(2 * math.pi, dtype=torch.float64)
trained = torch.minimum((L - 1) * theta, full_turn)  # (64,)
fig, ax = plt.subplots(figsize=(7, 2.8))
for name in methods:
    reached = torch.minimum((4 * L - 1) * freq[name], full_turn)
    ratio = reached / trained
    beyond = int((ratio > 1.01).sum())
    print(f"{name:>6}: {beyond:2} pairs more than 1% past the trained "
          f"range, largest ratio {ratio.max():.4f}")
    ax.plot(pairs, ratio, style[name], label=name)
ax.axvline(first_slow, ls="--", lw=0.8, color="gray")
ax.set_title(rf"one head: largest angle at $4L$ / in training, $L = {L}$")
ax.set_xlabel("pair $c$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown] lang="en"
# ## In short
#
# | | fast pairs | slow pairs | at $4L$ |
# |---|---|---|---|
# | linear | divided by $s$ | divided by $s$ | every angle in the trained range; neighbors harder to tell apart |
# | NTK-aware | kept | divided by up to $s$ | most slow pairs past the trained range |
# | YaRN | kept | divided by $s$ | every angle in the trained range; scores times $t^2$ |
#
# The [RoPE scaling](../../glossary/rope-scaling/) entry has the formulas, dynamic NTK, Llama 3.1's
# `llama3` type and LongRoPE, the tested code and the sources;
# [RoPE](../../glossary/rotary-position-embedding/) has the rotation itself, and the notebook
# [Positions in attention](../positions-in-attention/) compares it with sinusoidal positions and
# ALiBi.

# %% [markdown] lang="es"
# ## En resumen
#
# | | pares rápidos | pares lentos | con $4L$ |
# |---|---|---|---|
# | lineal | divididos por $s$ | divididos por $s$ | todos los ángulos dentro del intervalo del entrenamiento; tokens vecinos más difíciles de distinguir |
# | *NTK-aware* | se conservan | divididos por $s$ como mucho | la mayoría de los pares lentos, fuera del intervalo del entrenamiento |
# | YaRN | se conservan | divididos por $s$ | todos los ángulos dentro del intervalo del entrenamiento; puntuaciones multiplicadas por $t^2$ |
#
# La entrada [escalado de RoPE](../../glossary/rope-scaling/) tiene las fórmulas, el NTK dinámico,
# el tipo `llama3` de Llama 3.1 y LongRoPE, el código probado y las fuentes;
# [RoPE](../../glossary/rotary-position-embedding/) explica el giro en sí, y el cuaderno
# [Posiciones en la atención](../positions-in-attention/) lo compara con las posiciones
# sinusoidales y con ALiBi.

# %% [markdown] lang="da"
# ## Kort fortalt
#
# | | hurtige par | langsomme par | ved $4L$ |
# |---|---|---|---|
# | lineær | divideret med $s$ | divideret med $s$ | alle vinkler inden for intervallet fra træningen; tokens tæt på hinanden er sværere at skelne |
# | *NTK-aware* | beholdes | divideret med op til $s$ | de fleste langsomme par uden for intervallet fra træningen |
# | YaRN | beholdes | divideret med $s$ | alle vinkler inden for intervallet fra træningen; scorerne ganges med $t^2$ |
#
# Opslaget [RoPE-skalering](../../glossary/rope-scaling/) har formlerne, dynamisk NTK, LongRoPE,
# typen `llama3` fra Llama 3.1, den testede kode og kilderne.
# [RoPE](../../glossary/rotary-position-embedding/) forklarer selve drejningen, og notebooken
# [Positioner i attention](../positions-in-attention/) sammenligner RoPE med sinusformet positional
# encoding og ALiBi.
