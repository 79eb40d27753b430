/* Loaded before the vendored force-graph: at load it appends two <style> elements to <head> (its own and its
   tooltip's), which the page's Content-Security-Policy (style-src 'self') blocks, one console error each
   time. app.css carries those rules, so the two elements are kept out of the document instead (the vendored
   file stays as published); app.js puts <head>'s own appendChild back when it starts. */
"use strict";
document.head.appendChild = function (node) {
  return node instanceof HTMLStyleElement ? node : Node.prototype.appendChild.call(this, node);
};
