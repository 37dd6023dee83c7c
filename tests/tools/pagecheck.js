// pagecheck.js — loaded first in a copy of a docs page by tests/suites/docs_site.sh. Records
// script errors, failed loads (images, stylesheets) and console errors from the start, and
// after the load event measures, at the window's width: every code block, figure, image, table
// and display formula must fit the page (no horizontal overflow past the window, no code block
// wider than its box: a scroll bar hides code), every image must have loaded; no code block
// outside the collapsed program section shows `#include` or `free(`. The result goes
// into <pre id="pagecheck"> as JSON lines, which chromium --dump-dom prints.
(function () {
  var problems = [];
  var say = function (s) { problems.push(String(s)); };
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) say('failed to load ' + (t.src || t.href));
    else say('script error: ' + e.message);
  }, true);
  var cerr = console.error;
  console.error = function () {
    say('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return cerr.apply(console, arguments);
  };
  window.addEventListener('load', function () {
    var vw = document.documentElement.clientWidth;
    var what = 'pre, figure, img, table, math[display="block"]';
    document.querySelectorAll(what).forEach(function (el, i) {
      var r = el.getBoundingClientRect();
      var name = el.tagName.toLowerCase() + '#' + i +
        (el.getAttribute('src') ? ' ' + el.getAttribute('src') : '');
      if (r.left < -0.5 || r.right > vw + 0.5)
        say('overflows the page (' + Math.round(r.left) + '..' + Math.round(r.right) +
            ' of ' + vw + ' px): ' + name);
      if (el.tagName === 'PRE' && el.scrollWidth > el.clientWidth + 1)
        say('code wider than its block (' + el.scrollWidth + ' > ' + el.clientWidth +
            ' px), hidden behind a scroll bar: ' + (el.textContent || '').split('\n')[0].slice(0, 60));
      if (el.tagName === 'IMG' && !(el.complete && el.naturalWidth > 0))
        say('image did not load: ' + el.getAttribute('src'));
    });
    // The page body reads like the book's: no program plumbing in its code blocks (includes,
    // frees) outside the collapsed <details class="program"> section; no failed @code splice.
    document.querySelectorAll('pre').forEach(function (el) {
      if (el.closest('details.program') || el.matches('pre.text, pre.reference') ||
          el.querySelector('code.language-text')) return;
      var t = el.textContent || '';
      [/#include/, /free\(/].forEach(function (re) {
        var m = t.split('\n').filter(function (l) { return re.test(l); })[0];
        if (m) say('the page body shows "' + re.source.replace('\\', '') +
                   '" outside the collapsed program section: ' + m.trim().slice(0, 80));
      });
    });
    if ((document.body.textContent || '').indexOf('@code error:') >= 0)
      say('a failed @code splice: ' + document.body.textContent.split('@code error:')[1].split('\n')[0].slice(0, 120));
    if (document.documentElement.scrollWidth > vw + 1)
      say('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw + ' px');
    var out = document.createElement('pre');
    out.id = 'pagecheck';
    out.textContent = JSON.stringify({width: vw, problems: problems});
    document.body.appendChild(out);
  });
})();
