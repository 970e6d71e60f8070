'use strict';
// meshfs folder pages. A thumbnail that fails to load gives way to its
// icon (its span gets class "missing"; one that loads, "loaded"); the
// pre.fetch elements show the text file their data-src names, JSON
// pretty-printed. Nothing here writes HTML: names reach the page as text.
(function () {
  // Capturing on the document sees every image's load and error, even
  // those that end before the body is parsed: this script runs in <head>.
  function mark(cls) {
    return function (e) {
      const t = e.target;
      if (t instanceof HTMLImageElement && t.classList.contains('thumb') && t.parentNode) {
        t.parentNode.classList.add(cls);
      }
    };
  }
  document.addEventListener('error', mark('missing'), true);
  document.addEventListener('load', mark('loaded'), true);

  const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  const MAX_COLOURED = 1 << 20;

  // colour appends text to el with JSON strings, keys, numbers and
  // literals in spans.
  function colour(el, text) {
    if (text.length > MAX_COLOURED) {
      el.textContent = text;
      return;
    }
    const frag = document.createDocumentFragment();
    let last = 0;
    function span(cls, s) {
      const e = document.createElement('span');
      e.className = cls;
      e.textContent = s;
      frag.appendChild(e);
    }
    for (const m of text.matchAll(TOKEN)) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1] !== undefined) {
        span(m[2] ? 'key' : 'str', m[1]);
        if (m[2]) frag.appendChild(document.createTextNode(m[2]));
      } else if (m[3] !== undefined) {
        span('lit', m[3]);
      } else {
        span('num', m[4]);
      }
      last = m.index + m[0].length;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    el.textContent = '';
    el.appendChild(frag);
  }

  async function show(el) {
    try {
      const res = await fetch(el.dataset.src, {headers: {Accept: 'application/json, text/plain, */*'}});
      if (!res.ok) throw new Error(res.status + ' ' + res.statusText);
      const text = await res.text();
      if (el.classList.contains('json')) {
        let pretty = null;
        try {
          pretty = JSON.stringify(JSON.parse(text), null, 2);
        } catch (e) {
          pretty = null;
        }
        if (pretty !== null) colour(el, pretty); else el.textContent = text;
      } else {
        el.textContent = text;
      }
      el.dataset.state = 'shown';
    } catch (e) {
      el.textContent = 'could not load ' + el.dataset.src + ': ' + e.message;
      el.dataset.state = 'error';
    }
  }

  document.addEventListener('DOMContentLoaded', function () {
    for (const el of document.querySelectorAll('pre.fetch[data-src]')) show(el);
  });
})();
