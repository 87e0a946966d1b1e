/* Navigation landmarks Material leaves without a name of their own, so that a screen-reader
 * user can tell them apart (axe: landmark-unique):
 * - a section whose page is its index (navigation.indexes: "Reports") is a <nav> labelled by
 *   the toggle beside the section's link, which holds only an icon: it takes the link's name;
 * - each code block's buttons (content.code.copy) sit in a <nav class="md-code__nav">, one per
 *   block, all alike: each is named after its block's number.
 * Material builds the code blocks' buttons when it mounts the page (its document$ emits);
 * this runs a frame later. */
(function () {
  "use strict";

  var CODE = { zh: "代码块 {n} 的按钮", en: "Buttons of code block {n}" };

  function name() {
    var navs = document.querySelectorAll("nav.md-nav[aria-labelledby]");
    for (var i = 0; i < navs.length; i++) {
      var nav = navs[i];
      var label = document.getElementById(nav.getAttribute("aria-labelledby"));
      if (!label || label.textContent.trim()) continue;
      var link = label.parentNode && label.parentNode.querySelector("a.md-nav__link");
      var text = link && link.textContent.trim();
      if (!text) continue;
      nav.removeAttribute("aria-labelledby");  // it would win over aria-label, empty
      nav.setAttribute("aria-label", text);
    }
    var lang = document.documentElement.lang === "zh" ? "zh" : "en";
    var code = document.querySelectorAll("nav.md-code__nav");
    for (var j = 0; j < code.length; j++) {
      code[j].setAttribute("aria-label", CODE[lang].replace("{n}", String(j + 1)));
    }
  }

  function later() {
    requestAnimationFrame(name);
  }

  if (typeof document$ !== "undefined" && document$ && document$.subscribe) {
    document$.subscribe(later);
  } else {
    document.addEventListener("DOMContentLoaded", later);
  }
})();
