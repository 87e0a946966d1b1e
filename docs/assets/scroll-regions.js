/* A table wider than the column scrolls sideways inside Material's .md-typeset__scrollwrap.
 * A keyboard user can only scroll what can take the focus, so each wrapper that does
 * overflow becomes a focusable, named region (WCAG 2.1.1; axe: scrollable-region-focusable).
 * Wrappers that fit get nothing: a tab stop on every table would only be noise. Whether a
 * table overflows depends on the window's width, so this runs again on resize. Material
 * wraps the tables when it mounts the page (its document$ emits), before this runs. */
(function () {
  "use strict";

  // Numbered: two regions with one name could not be told apart (axe: landmark-unique).
  var LABEL = { zh: "表格 {n}，可横向滚动", en: "Table {n}, scrolls sideways" };

  function mark() {
    var lang = document.documentElement.lang === "zh" ? "zh" : "en";
    var wraps = document.querySelectorAll(".md-typeset__scrollwrap");
    for (var i = 0; i < wraps.length; i++) {
      var wrap = wraps[i];
      if (wrap.scrollWidth > wrap.clientWidth + 1) {
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", LABEL[lang].replace("{n}", String(i + 1)));
      } else {
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    }
  }

  var pending = 0;
  function later() {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(mark);
  }

  if (typeof document$ !== "undefined" && document$ && document$.subscribe) {
    document$.subscribe(later);
  } else {
    document.addEventListener("DOMContentLoaded", later);
  }
  window.addEventListener("resize", later);
})();
