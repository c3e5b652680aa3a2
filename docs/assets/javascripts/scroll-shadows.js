// The scroll shadows of site.css stay only on a box that has more to show than its width: a
// box that fits gets the attribute `data-termbase-fits` (not a class: Material styles
// `table:not([class])`) and with it a plain background, whose text contrast can be measured.
// A ResizeObserver measures each box again whenever its size changes (a turned phone, an
// opened <details>), before the browser paints. Without this script every box keeps the
// shadows, which on a box that fits lie hidden under their covers.
//
// Scroll timelines (`animation-timeline: scroll(self inline)`) did this in CSS alone, but
// doubled the time Chromium took to load a page (2.07 s against 0.75 s for the claims page,
// with its 223 code blocks and formulas, on a phone-sized screen).
(() => {
  const BOXES = ".md-typeset pre > code, div.termbase-math, .md-typeset__scrollwrap, " +
                ".md-typeset table:not([class]), .jp-OutputArea-output";
  const measure = (box) => box.toggleAttribute("data-termbase-fits", box.scrollWidth <= box.clientWidth + 1);
  const observer = new ResizeObserver((entries) => entries.forEach((entry) => measure(entry.target)));
  const watch = () => document.querySelectorAll(BOXES).forEach((box) => observer.observe(box));
  // Material wraps wide tables in .md-typeset__scrollwrap before it emits document$.
  if (window.document$) window.document$.subscribe(watch);
  else watch();
})();
