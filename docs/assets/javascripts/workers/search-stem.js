// Material's search worker, with each query word stemmed in the site's language first.
// Material adds a trailing wildcard to every word ("opmærksomheden*"), and lunr skips stemming
// for wildcard words, so an inflected form never found its lemma. Stemming the word here
// ("opmærksomheden" -> "opmærksom") before Material adds the wildcard makes it match the
// stemmed index (mkdocs.yml: search pipeline with the stemmer).
var termbaseLang = "en";
self.addEventListener("message", function (event) {
  var message = event.data;
  if (!message) return;
  if (message.type === 0 && message.data && message.data.config) {  // SETUP
    termbaseLang = message.data.config.lang[0] || "en";
  } else if (message.type === 2 && typeof message.data === "string" && self.lunr) {  // QUERY
    var stemmer = termbaseLang === "en" ? lunr.stemmer : (lunr[termbaseLang] || {}).stemmer;
    if (!stemmer) return;
    message.data = message.data.replace(/[^\s"+\-*~^:]+/g, function (word, offset, all) {
      var before = all.charAt(offset - 1), after = all.charAt(offset + word.length);
      if (/[+\-:~^]/.test(before) || /[~^:*]/.test(after)) return word;  // leave lunr syntax alone
      return stemmer(new lunr.Token(word.toLowerCase())).toString() || word;
    });
  }
});
importScripts(self.location.hash.slice(1));
