/* Render the formulas that pymdownx.arithmatex (generic mode) leaves in the page:
 * <span class="arithmatex">\(...\)</span> inline, <div class="arithmatex">\[...\]</div>
 * as a block. Only those elements are rendered, so a "$" in ordinary text stays text.
 * KaTeX is served from the site itself (assets/katex/), never from elsewhere.
 * Material's `document$` emits on every page load; fall back to DOMContentLoaded if the
 * theme does not provide it. */
(function () {
  "use strict";

  function renderMath(root) {
    if (typeof renderMathInElement !== "function") {
      return;
    }
    var elements = (root || document).querySelectorAll(".arithmatex");
    for (var i = 0; i < elements.length; i++) {
      renderMathInElement(elements[i], {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true }
        ],
        throwOnError: false
      });
    }
  }

  if (typeof document$ !== "undefined" && document$ && document$.subscribe) {
    document$.subscribe(function (doc) {
      renderMath(doc && doc.body ? doc.body : document);
    });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { renderMath(document); });
  } else {
    renderMath(document);
  }
})();
