// The scroll shadows of site.css stay only on a box that has more to show than its width: a
// box that fits gets the attribute `data-termbase-fits` (not a class: Material styles
// `table:not([class])`) and with it a plain background, whose text contrast can be measured.
// A ResizeObserver measures each box again whenever its size changes (a turned phone, an
// opened <details>), before the browser paints; boxes added later (the config explainer's
// tables) are observed as they arrive. Without this script every box keeps the shadows, which
// on a box that fits lie hidden under their covers.
//
// Scroll timelines (`animation-timeline: scroll(self inline)`) did this in CSS alone, but
// doubled the time Chromium took to load a page (2.07 s against 0.75 s for the claims page,
// with its 223 code blocks and formulas, on a phone-sized screen).
(() => {
  const BOXES = ".md-typeset pre > code, div.termbase-math, .md-typeset__scrollwrap, " +
                ".md-typeset table:not([class]), .jp-OutputArea-output";
  const resized = new ResizeObserver((entries) => {
    // every width read first, then every attribute written: one layout, not one per box
    const fits = entries.map((entry) => entry.target.scrollWidth <= entry.target.clientWidth + 1);
    entries.forEach((entry, i) => entry.target.toggleAttribute("data-termbase-fits", fits[i]));
  });
  const observe = (root) => {
    if (root.matches(BOXES)) resized.observe(root);
    root.querySelectorAll(BOXES).forEach((box) => resized.observe(box));
  };
  const added = new MutationObserver((records) => records.forEach((record) =>
    record.addedNodes.forEach((node) => node instanceof Element && observe(node))));
  const watch = () => {
    resized.disconnect();  // a page's boxes only, should Material swap the page in place
    added.disconnect();
    observe(document.body);
    added.observe(document.body, {childList: true, subtree: true});
  };
  // Material wraps every plain table in .md-typeset__scrollwrap in its own subscriber to
  // document$, which runs before this one.
  if (window.document$) window.document$.subscribe(watch);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch, {once: true});
  else watch();
})();
