/* Keep the language switcher on plain links, and keep the browser from asking for files
 * that do not exist.
 *
 * mkdocs-static-i18n (reconfigure_material) points the switcher's links, and the page's
 * <link rel="alternate" hreflang> tags, at the same page in the other language. Material's
 * script then fetches "sitemap.xml" beside each <link rel="alternate"> target, i.e.
 * /claims/sitemap.xml and /en/claims/sitemap.xml, which do not exist (only /sitemap.xml
 * does): two 404s on every page (mkdocs-material issue 6582). The switcher's own <a> links
 * are already right, so the tags are dropped before Material reads them: Material reads
 * them when the DOMContentLoaded event fires, after this script (a plain script at the end
 * of <body>) has run. Search engines still find the translations in /sitemap.xml, which
 * lists each page's alternates. */
(function () {
  "use strict";
  var links = document.querySelectorAll('link[rel="alternate"][hreflang]');
  for (var i = 0; i < links.length; i++) {
    links[i].parentNode.removeChild(links[i]);
  }
})();
