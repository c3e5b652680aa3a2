# %% [markdown] lang="en"
# # Positions in attention
#
# Attention compares every query with every key and cares nothing for where they stand, so a
# transformer has to be told. This notebook puts three ways of telling it side by side, with the
# glossary's own code: the sinusoidal positional encoding of the original Transformer, rotary
# position embeddings (RoPE) and ALiBi. For each, it computes the score between one query and keys
# further and further back, and then what each does with a sequence longer than the one it was
# trained on.
#
# Nothing here is trained: the vectors are random, so the curves show what the position method
# itself contributes to a score, not what a trained model attends to. What trained models do past
# their training length is reported from the papers, with their numbers.

# %% [markdown] lang="es"
# # Posiciones en la atención
#
# La atención compara cada consulta con cada clave sin importarle dónde está cada una, y por eso a
# un transformer hay que decírselo. Este cuaderno compara tres maneras de hacerlo con el propio código
# del glosario: la codificación posicional sinusoidal del Transformer original, los embeddings de
# posición rotatorios (RoPE) y ALiBi. Para cada una calcula la puntuación de una consulta con claves
# cada vez más alejadas hacia atrás y, después, qué hace cada una con una secuencia más larga que
# la del entrenamiento.
#
# Aquí no se entrena nada: como los vectores son aleatorios, las curvas muestran lo que el propio
# método de codificación posicional aporta a una puntuación, no a qué atiende un modelo entrenado.
# Lo que hacen los modelos entrenados más allá de su longitud de entrenamiento se toma de los
# artículos, con sus cifras.

# %% [markdown] lang="da"
# # Positioner i attention
#
# Attention sammenligner hver forespørgsel med hver nøgle og tager ikke hensyn til, hvor de står, så
# en transformer skal have det at vide. Med ordlistens egen kode stiller denne notebook tre måder at
# gøre det på op ved siden af hinanden: den sinusformede positional encoding fra den oprindelige
# Transformer, rotary position embeddings (RoPE) og ALiBi. For hver metode beregner den først scoren
# mellem én forespørgsel og nøgler, der ligger længere og længere tilbage. Derefter viser den, hvad
# metoden gør med en sekvens, der er længere end den, modellen blev trænet på.
#
# Her trænes intet. Vektorerne er tilfældige, så kurverne viser, hvad selve positionsmetoden
# bidrager med til en score, ikke hvad en trænet model lægger vægt på. Hvad trænede modeller gør ud
# over deres træningslængde, gengives med artiklernes egne tal.

# %%
# --8<-- "snippets/positional_encoding.py:code"
# --8<-- "snippets/rotary_position_embedding.py:code"
# --8<-- "snippets/alibi.py:code"

# %%
import math

import matplotlib.pyplot as plt

torch.manual_seed(0)
L = 512  # the training length of this illustration
S = torch.arange(0, 2 * L + 1)  # distances m - n from 0 to 2L

# %% [markdown] lang="en"
# ## One query, keys further and further back
#
# **Sinusoidal.** The original Transformer adds $PE_p$ to the token at position $p$. With no
# content and no projections, what the positions alone contribute to the score of a query at $m$
# and a key at $n$ is $PE_m \cdot PE_n = \sum_c \cos\big((m - n)\,\omega_c\big)$: a function of the
# distance only, largest at 0, falling off on average and oscillating. In a real layer the query
# and key are $(x + PE)\,W^Q$ and $(x + PE)\,W^K$, so learned matrices sit between the two
# encodings and the content adds other terms.
#
# **RoPE.** The query and key of one head are rotated by their positions; the same two vectors put
# at every position give a score that depends only on $m - n$ as well, whatever the positions.
#
# **ALiBi.** The content score $q k^\top / \sqrt{d_k}$ is the same at every distance here, and each
# head subtracts its slope times the distance: one straight line per head, steep for head 1 (slope
# $1/2$), nearly flat for head 8 (slope $1/256$).
#
# The dashed line marks $L = 512$. Nothing in these formulas changes at it; what changes is that a
# model trained on 512 tokens has never seen what lies to its right.

# %% [markdown] lang="es"
# ## Una consulta, claves cada vez más atrás
#
# **Sinusoidal.** El Transformer original suma $PE_p$ al token de la posición $p$. Sin contenido y
# sin proyecciones, lo que aportan las posiciones por sí solas a la puntuación de una consulta en
# $m$ con una clave en $n$ es $PE_m \cdot PE_n = \sum_c \cos\big((m - n)\,\omega_c\big)$: una
# función solo de la distancia, máxima en 0, que baja en promedio y oscila. En una capa real, la
# consulta y la clave son $(x + PE)\,W^Q$ y $(x + PE)\,W^K$, de modo que entre las dos
# codificaciones hay matrices aprendidas, y el contenido añade otros términos.
#
# **RoPE.** La consulta y la clave de una cabeza se giran según sus posiciones; los dos mismos
# vectores colocados en cualquier posición dan una puntuación que también depende solo de $m - n$,
# sean cuales sean las posiciones.
#
# **ALiBi.** Aquí la puntuación de contenido, $q k^\top / \sqrt{d_k}$, es la misma a cualquier
# distancia, y cada cabeza resta el producto de su pendiente por la distancia: una recta por cabeza,
# empinada en la cabeza 1 (pendiente $1/2$) y casi plana en la 8 (pendiente $1/256$).
#
# La línea discontinua marca $L = 512$. En estas fórmulas no cambia nada ahí; lo que cambia es que un
# modelo entrenado con 512 tokens nunca ha visto lo que queda a su derecha.

# %% [markdown] lang="da"
# ## Én forespørgsel, nøgler længere og længere tilbage
#
# **Sinusformet positional encoding.** Den oprindelige Transformer lægger $PE_p$ til tokenet på
# position $p$. Uden indhold og uden projektioner bidrager positionerne alene med
# $PE_m \cdot PE_n = \sum_c \cos\big((m - n)\,\omega_c\big)$ til scoren for en forespørgsel på $m$
# og en nøgle på $n$. Bidraget afhænger kun af afstanden: det er størst ved 0 og falder i
# gennemsnit, mens det svinger. I et egentligt lag er forespørgslen og nøglen $(x + PE)\,W^Q$ og
# $(x + PE)\,W^K$, så der sidder lærte matricer mellem de to positional encodings, og indholdet
# bidrager med flere led.
#
# **RoPE.** Forespørgslen og nøglen i ét hoved drejes efter deres positioner. Sætter man de samme to
# vektorer på en hvilken som helst position, får man en score, der også kun afhænger af $m - n$.
#
# **ALiBi.** Indholdsscoren $q k^\top / \sqrt{d_k}$ er her den samme ved enhver afstand, og hvert
# hoved trækker sin hældning gange afstanden fra. Det giver én ret linje pr. hoved, stejl for
# hoved 1 (hældning $1/2$) og næsten flad for hoved 8 (hældning $1/256$).
#
# Den stiplede linje markerer $L = 512$. Intet i formlerne ændrer sig dér. Det, der ændrer sig, er,
# at en model, der er trænet på 512 tokens, aldrig har set det, der ligger til højre for linjen.

# %% alt={"en": "Three line charts against the distance m - n from 0 to 1024, with a dashed line at 512. Left: the dot product of two sinusoidal positional encodings, 32 at distance 0, dropping to about 10 and oscillating. Middle: the score of one RoPE query and key of head 1, about 80 at distance 0, oscillating and falling on average. Right: the ALiBi score of heads 1 to 8, straight lines from the same value at distance 0, head 1 falling to about -500 at distance 1024 and head 8 almost flat.", "es": "Tres gráficos de líneas frente a la distancia m − n, de 0 a 1024, con una línea discontinua en 512. A la izquierda, el producto escalar de dos codificaciones posicionales sinusoidales: 32 en la distancia 0, que baja hasta unos 10 y oscila. En el centro, la puntuación, en la cabeza 1, de una consulta y una clave con RoPE: unos 80 en la distancia 0, oscilante y decreciente en promedio. A la derecha, la puntuación con ALiBi de las cabezas 1 a 8: rectas que salen del mismo valor en la distancia 0; la de la cabeza 1 baja hasta unos −500 en la distancia 1024, y la de la cabeza 8 es casi plana.", "da": "Tre kurvediagrammer som funktion af afstanden m − n fra 0 til 1.024 med en stiplet linje ved 512. Til venstre prikproduktet af to rækker i den sinusformede positional encoding: 32 ved afstand 0, hvorefter det falder til omkring 10 og svinger. I midten scoren for én RoPE-forespørgsel og -nøgle i hoved 1: omkring 80 ved afstand 0, hvorefter den svinger og i gennemsnit falder. Til højre ALiBi-scoren for hoved 1 til 8 som rette linjer fra samme værdi ved afstand 0. Hoved 1 falder til omkring −500 ved afstand 1.024, og linjen for hoved 8 er næsten flad."}
# Sinusoidal: the position part of the score, PE_m . PE_n, query at m.
d_model = 64
pe = sinusoidal_positional_encoding(4 * L, d_model, dtype=torch.float64)


def pe_score(m):
    return pe[m - S] @ pe[m]  # (2L + 1,): keys at n = m - s


same = torch.allclose(pe_score(1100), pe_score(1500))
print("sinusoidal: PE_m . PE_n depends only on m - n:", same)
assert same

# RoPE: one head, d_k = 64, the same query and key vectors at every position.
d_k = 64
q = torch.randn(d_k, dtype=torch.float64)
k = q + 0.3 * torch.randn(d_k, dtype=torch.float64)  # a key that matches q


def rope_score(m):
    q_m = apply_rope(q[None], torch.tensor([m]), layout="half")  # (1, d_k)
    keys = k.expand(len(S), -1)  # (2L + 1, d_k): the same key, n = m - s
    k_n = apply_rope(keys, m - S, layout="half")
    return k_n @ q_m[0]


same = torch.allclose(rope_score(1100), rope_score(1500))
print("RoPE: q_m . k_n depends only on m - n:", same)
assert same

# ALiBi: 8 heads; the same vectors, so q . k / sqrt(d_k) is one constant.
heads = 8
bias = alibi_bias(heads, 1, 2 * L + 1, dtype=torch.float64)[:, 0]  # (H, S)
alibi_scores = (q @ k / math.sqrt(d_k)) + bias.flip(-1)  # column s: distance s
exponents = alibi_slopes(heads).log2().tolist()
print("ALiBi slopes, log2:", " ".join(f"{e:g}" for e in exponents))

fig, axes = plt.subplots(1, 3, figsize=(10, 2.8), sharex=True)
axes[0].plot(S, pe_score(1500))
axes[0].set_title(r"$PE_m \cdot PE_n$")
axes[1].plot(S, rope_score(1500))
axes[1].set_title(r"$\mathrm{head}_1:\ \tilde q_m \tilde k_n^\top$")
for h in range(heads):
    axes[2].plot(S, alibi_scores[h], label=rf"$\mathrm{{head}}_{{{h + 1}}}$")
axes[2].set_title(r"$q k^\top / \sqrt{d_k} - m_r\,(m - n)$")
axes[2].legend(fontsize=6, ncol=2)
for ax in axes:
    ax.axvline(L, ls="--", lw=0.8, color="gray")
    ax.set_xlabel("$m - n$")
plt.show()

# %% [markdown] lang="en"
# ## Longer than in training
#
# **Learned positions** have no row past the table, so the code refuses the 513th token of a
# 512-row table.
#
# **Sinusoidal positions** exist for every position, but the slow pairs never complete a turn in
# $L$ positions, so past $L$ they take values the model has never seen. Press et al. (2021) found
# that a sinusoidal language model trained on 512 tokens improves its perplexity on up to 20 more
# tokens, stays level up to 50 and then degrades.
#
# **RoPE** in LLaMA's setting ($d_k = 128$, $\beta = 10\,000$, 2048 positions) has the same slow
# pairs. Press et al. found that a rotary model trained on 512 tokens improves on up to 200 more
# tokens; Chen et al. (2023) report that running LLaMA directly beyond 2048 positions can send the
# perplexity above $10^3$. Their position interpolation multiplies the positions by $L / L'$ instead,
# here $2048 / 4096$: every position then lies in $[0, L)$, and the score at distance $s$ becomes
# the old score at distance $s L / L'$. The cell checks both. On the left, the score near the query:
# with interpolation it is the same curve, stretched to twice its width. On the right, the angle of
# pair 42, the fastest of those that turn less than once in 2048 positions: without interpolation it
# leaves the range seen in training (dashed) at position 2048, with it it never does. With
# fine-tuning of at most 1000 steps, this extended LLaMA 7B to 65B to windows of up to 32,768 tokens.
#
# **ALiBi** adds nothing new for a longer input: the lines go on. With equal content scores, the
# weight that each head gives to keys more than 1023 tokens back, for a query at the 2048th token,
# shows how little most heads look that far. Press et al. trained a 1.3-billion-parameter model on
# 1024 tokens that reached, on 2048 tokens, the perplexity of a sinusoidal model trained on 2048,
# training 11% faster with 11% less memory; with sliding-window evaluation its perplexity stays
# flat as the input grows: its merit is that it does not get worse, not that it uses the extra
# context.

# %% [markdown] lang="es"
# ## Secuencias más largas que en el entrenamiento
#
# **Las posiciones aprendidas** no tienen ninguna fila más allá de la tabla, de modo que, con una
# tabla de 512 filas, el código rechaza el token 513.
#
# **Las posiciones sinusoidales** existen para cualquier posición, pero los pares lentos no llegan a
# dar una vuelta en $L$ posiciones, por lo que más allá de $L$ toman valores que el modelo nunca ha
# visto. Press et al. (2021) observaron que un modelo de lenguaje sinusoidal entrenado con 512 tokens
# mejora su perplejidad con hasta 20 tokens más, se mantiene hasta 50 y después empeora.
#
# **RoPE**, con la configuración de LLaMA ($d_k = 128$, $\beta = 10\,000$, 2048 posiciones), tiene
# los mismos pares lentos. Press et al. observaron que un modelo con RoPE entrenado con 512 tokens
# mejora con hasta 200 tokens más; Chen et al. (2023) señalan que ejecutar LLaMA directamente más
# allá de 2048 posiciones puede llevar la perplejidad por encima de $10^3$. La interpolación de
# posiciones que proponen, en cambio, multiplica las posiciones por $L / L'$, aquí $2048 / 4096$:
# todas las posiciones quedan entonces en $[0, L)$, y la puntuación a la distancia $s$ pasa a ser la
# antigua a la distancia $s L / L'$. La celda comprueba las dos cosas. A la izquierda, la puntuación
# cerca de la consulta: con interpolación es la misma curva, estirada al doble de ancho. A la
# derecha, el ángulo del par 42, el más rápido de los que dan menos de una vuelta en 2048
# posiciones: sin interpolación sale del intervalo visto en el entrenamiento (la línea discontinua)
# en la posición 2048, y con ella no sale nunca. Así, con un ajuste fino de 1000 pasos como mucho,
# se amplió hasta 32 768 tokens la ventana de contexto de los modelos LLaMA de 7B a 65B.
#
# **ALiBi** no introduce nada nuevo con una entrada más larga: las rectas se prolongan. Con puntuaciones de
# contenido iguales, el peso que cada cabeza da a las claves situadas más de 1023 tokens atrás, para
# una consulta en el token 2048, muestra lo poco que miran tan lejos la mayoría de las cabezas. Press et
# al. entrenaron con 1024 tokens un modelo de 1300 millones de parámetros que alcanzó, con 2048
# tokens, la perplejidad de un modelo sinusoidal entrenado con 2048, y se entrenó un 11 % más rápido
# con un 11 % menos de memoria; con una evaluación de ventana deslizante, su perplejidad se
# mantiene constante al crecer la entrada: su mérito está en no empeorar, no en aprovechar el
# contexto adicional.

# %% [markdown] lang="da"
# ## Længere end under træningen
#
# **Lærte embeddings for absolutte positioner** har ingen rækker ud over tabellens sidste, så koden
# afviser token nummer 513 i en tabel med 512 rækker.
#
# **Sinusformet positional encoding** findes for enhver position, men de langsomme par når ikke at
# dreje én omgang på $L$ positioner, så ud over $L$ antager de værdier, modellen aldrig har set.
# Press et al. (2021) fandt, at en sprogmodel med sinusformet positional encoding, der er trænet på
# 512 tokens, får lavere perpleksitet på input, der er op til 20 tokens længere end
# træningslængden. Den holder niveauet op til 50 tokens længere og bliver derefter dårligere.
#
# **RoPE** med den første Llamas indstillinger ($d_k = 128$, $\beta = 10\,000$, 2.048 positioner)
# har de samme langsomme par. Press et al. fandt, at en model med RoPE, der er trænet på 512 tokens,
# får lavere perpleksitet på input, der er op til 200 tokens længere end træningslængden. Chen et al.
# (2023) skriver, at når den første Llama køres direkte ud over 2.048 positioner, kan perpleksiteten
# stige til over $10^3$. Deres positionsinterpolation ganger i stedet positionerne med $L / L'$, her
# $2048 / 4096$. Så ligger alle positioner i $[0, L)$, og scoren ved afstanden $s$ bliver den gamle
# score ved afstanden $s L / L'$. Cellen kontrollerer begge dele. Til venstre ses scoren nær
# forespørgslen: med interpolation er det den samme kurve, strakt til den dobbelte bredde. Til højre
# ses vinklen for par 42, det hurtigste af de par, der drejer mindre end én omgang på 2.048
# positioner. Uden interpolation forlader vinklen det interval, der blev set under træningen
# (stiplet), ved position 2.048, og med interpolation gør den det aldrig. Med finjustering på
# maksimalt 1.000 trin udvidede metoden kontekstvinduet i den første Llamas modeller (7B til 65B)
# til højst 32.768 tokens.
#
# **ALiBi** tilføjer intet nyt for et længere input, for linjerne fortsætter bare. Når
# indholdsscorerne er ens, viser cellen, hvor lidt vægt hvert hoved lægger på nøgler mere end 1.023
# tokens tilbage fra token nummer 2.048. De fleste hoveder ser næsten ikke så langt. Press et al.
# trænede en model med 1,3 mia. parametre på 1.024 tokens, som på 2.048 tokens nåede samme
# perpleksitet som en model med sinusformet positional encoding, der var trænet på 2.048. Samtidig
# var træningen 11 % hurtigere og brugte 11 % mindre hukommelse. Ved evaluering i et glidende vindue
# ændrer modellens perpleksitet sig stort set ikke, når inputtet vokser. ALiBis styrke er altså, at
# modellen ikke bliver dårligere, ikke at den udnytter den ekstra kontekst.

# %% alt={"en": "Two line charts. Left: the score of one RoPE query and key of head 1 (d_k = 128) against the distance from 0 to 256, with the positions as they are and with position interpolation (L / L' = 1/2); both start at about 120 and fall while oscillating, the interpolated curve more smoothly, as the same curve stretched to twice its width. Right: the angle of pair 42 against the position from 0 to 4096; without interpolation it rises past the dashed level of the largest angle seen in training, at position 2048, and reaches about 11; with interpolation it rises half as fast and ends at that level.", "es": "Dos gráficos de líneas. A la izquierda, la puntuación, en la cabeza 1 (d_k = 128), de una consulta y una clave con RoPE frente a la distancia, de 0 a 256, con las posiciones tal cual y con interpolación de posiciones (L / L' = 1/2): las dos empiezan en unos 120 y bajan oscilando, la interpolada de forma más suave, como la misma curva estirada al doble de ancho. A la derecha, el ángulo del par 42 frente a la posición, de 0 a 4096: sin interpolación, en la posición 2048 supera la línea discontinua que marca el mayor ángulo visto en el entrenamiento y llega a unos 11; con interpolación sube a la mitad de velocidad y termina en ese nivel.", "da": "To kurvediagrammer. Til venstre scoren for én RoPE-forespørgsel og -nøgle i hoved 1 (d_k = 128) som funktion af afstanden fra 0 til 256, med positionerne, som de er, og med positionsinterpolation (L / L' = 1/2). Begge kurver starter omkring 120 og falder, mens de svinger, den interpolerede mere jævnt, som den samme kurve strakt til den dobbelte bredde. Til højre vinklen for par 42 som funktion af positionen fra 0 til 4.096. Uden interpolation stiger den ved position 2.048 forbi det stiplede niveau for den største vinkel, der blev set under træningen, og når omkring 11. Med interpolation stiger den halvt så hurtigt og slutter ved det niveau."}
# Learned positions: no row past the table.
learned = LearnedPositionEmbedding(vocab_size=100, max_positions=L, d_model=16)
try:
    learned(torch.zeros(1, L + 1, dtype=torch.long))  # 513 tokens
except ValueError as error:
    print("learned:", error)

# Sinusoidal: pairs whose wavelength 2 pi / omega_c exceeds L.
omega = 10000.0 ** (-torch.arange(0, d_model, 2) / d_model)
slow = (2 * math.pi / omega > L).sum().item()
print(f"sinusoidal, d_model = {d_model}: {slow} of {d_model // 2} pairs "
      f"turn less than once in {L} positions")

# RoPE in LLaMA's setting, and position interpolation to twice the length.
d_k, L_train, L_new = 128, 2048, 4096
theta = rope_angles(torch.tensor([1]), d_k)[0]  # theta_c, rope_theta = 10000
slow = (2 * math.pi / theta > L_train).sum().item()
print(f"RoPE, d_k = {d_k}: {slow} of {d_k // 2} pairs "
      f"turn less than once in {L_train} positions")
scale = L_train / L_new
positions = torch.arange(L_new, dtype=torch.float64)
print(f"interpolated positions: 0 .. {(positions * scale).max().item():g},"
      f" inside [0, {L_train}):", bool((positions * scale < L_train).all()))

q = torch.randn(d_k, dtype=torch.float64)
k = q + 0.3 * torch.randn(d_k, dtype=torch.float64)
s = torch.arange(L_new, dtype=torch.float64)  # distances 0 .. 4095


def score(query_at, key_at):
    """q rotated to query_at, k to key_at (tensors of positions)."""
    q_m = apply_rope(q.expand(len(query_at), -1), query_at, layout="half")
    k_n = apply_rope(k.expand(len(key_at), -1), key_at, layout="half")
    return (q_m * k_n).sum(-1)


last = torch.full_like(s, L_new - 1)  # the query is the last of 4096 tokens
plain = score(last, last - s)
interpolated = score(last * scale, (last - s) * scale)
old_at_shorter = score(last, last - s * scale)  # old score at distance s L/L'
same = torch.allclose(interpolated, old_at_shorter)
print("interpolated score at s == old score at s * L / L':", same)
assert same

# ALiBi: weight on keys more than 1023 tokens back, query at token 2048.
weights = torch.softmax(alibi_bias(8, 1, 2048, dtype=torch.float64)[:, 0], -1)
far = weights[:, :1024].sum(-1)  # (H,)
print("ALiBi, weight on keys 1024 or more tokens back, heads 1 to 8:",
      " ".join(f"{x:.4f}" for x in far.tolist()))

# the first pair (0-based index) that turns less than once in L_train
c = int((2 * math.pi / theta > L_train).nonzero()[0])
fig, axes = plt.subplots(1, 2, figsize=(10, 2.8))
near = slice(0, 257)
axes[0].plot(s[near], plain[near], lw=1.0, label="$m$")
axes[0].plot(s[near], interpolated[near], lw=1.0, label="$m L / L'$")
title = r"$\mathrm{head}_1:\ \tilde q_m \tilde k_n^\top,\ d_k = 128$"
axes[0].set_title(title)
axes[0].set_xlabel("$m - n$")
axes[0].legend(fontsize=8)
axes[1].plot(positions, positions * theta[c].item(), lw=1.0, label="$m$")
axes[1].plot(positions, positions * scale * theta[c].item(), lw=1.0,
             label="$m L / L'$")
axes[1].axhline((L_train - 1) * theta[c].item(), ls="--", lw=0.8, color="gray")
axes[1].axvline(L_train, ls="--", lw=0.8, color="gray")
axes[1].set_title(rf"$m\,\theta_{{{c + 1}}}$")
axes[1].set_xlabel("$m$")
axes[1].legend(fontsize=8)
plt.show()

# %% [markdown] lang="en"
# ## In short
#
# | | positions live in | past the training length |
# |---|---|---|
# | learned absolute | a table added to $X$ | no row: refused |
# | sinusoidal | a fixed table added to $X$ | defined, unseen values; degrades after a few dozen tokens (Press et al.) |
# | RoPE | rotations of $q$ and $k$ | unseen angles; position interpolation rescales positions, with fine-tuning (Chen et al.) |
# | ALiBi | a bias on the scores | the same lines; does not degrade (Press et al.) |
#
# The glossary entries have the formulas, the tested code and the sources:
# [positional encoding](../../glossary/positional-encoding/),
# [RoPE](../../glossary/rotary-position-embedding/), [ALiBi](../../glossary/alibi/) and
# [relative position bias](../../glossary/relative-position-bias/), T5's learned buckets, which
# Press et al. found to extrapolate by 600 to 800 tokens.

# %% [markdown] lang="es"
# ## En resumen
#
# | | dónde están las posiciones | más allá de la longitud de entrenamiento |
# |---|---|---|
# | absolutas aprendidas | una tabla que se suma a $X$ | no hay fila: se rechaza |
# | sinusoidales | una tabla fija que se suma a $X$ | definidas, con valores no vistos; empeoran tras unas decenas de tokens (Press et al.) |
# | RoPE | giros de $q$ y $k$ | ángulos no vistos; la interpolación de posiciones cambia su escala, con ajuste fino (Chen et al.) |
# | ALiBi | un sesgo en las puntuaciones | las mismas rectas; no empeora (Press et al.) |
#
# Las entradas del glosario tienen las fórmulas, el código probado y las fuentes:
# [codificación posicional](../../glossary/positional-encoding/),
# [RoPE](../../glossary/rotary-position-embedding/), [ALiBi](../../glossary/alibi/) y
# [sesgo de posición relativa](../../glossary/relative-position-bias/), los intervalos aprendidos de
# T5, que según Press et al. extrapolan entre 600 y 800 tokens.

# %% [markdown] lang="da"
# ## Kort fortalt
#
# | | hvor positionsinformationen sidder | ud over træningslængden |
# |---|---|---|
# | lærte absolutte | en tabel, der lægges til $X$ | ingen række: positionen afvises |
# | sinusformede | en fast tabel, der lægges til $X$ | definerede, men usete værdier; modellen bliver dårligere efter nogle dusin tokens (Press et al.) |
# | RoPE | drejninger af $q$ og $k$ | usete vinkler; positionsinterpolation skalerer positionerne, med finjustering (Chen et al.) |
# | ALiBi | en bias på scorerne | de samme linjer; modellen bliver ikke dårligere (Press et al.) |
#
# Ordlisteopslagene har formlerne, den testede kode og kilderne:
# [positional encoding](../../glossary/positional-encoding/),
# [RoPE](../../glossary/rotary-position-embedding/), [ALiBi](../../glossary/alibi/) og
# [relative position bias](../../glossary/relative-position-bias/), T5's lærte intervaller, som ifølge
# Press et al. kan ekstrapolere 600 til 800 tokens ud over træningslængden.
