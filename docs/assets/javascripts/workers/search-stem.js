// Material's search worker, with two changes.
// 1. Each query word is stemmed in the site's language first. Material adds a trailing wildcard
//    to every word ("opmærksomheden*"), and lunr skips stemming for wildcard words, so an
//    inflected form never found its lemma. Stemming the word here ("opmærksomheden" ->
//    "opmærksom") before Material adds the wildcard makes it match the stemmed index
//    (mkdocs.yml: search pipeline with the stemmer).
// 2. A query that is the name of an entry, in any of the site's languages, lists that entry
//    first (search/names.json, written by termbase/site/search_names.py): the words of a page
//    that quotes the term often must not outrank the term's own entry.
var termbaseLang = "en";
var termbaseQuery = "";
var termbaseNames = null;

function termbaseNormalized(text) {
  return text.replace(/[*+~^"\-]/g, " ").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
}

function termbaseEntryFor(query) {
  if (termbaseNames === null) {
    termbaseNames = {};
    try {  // synchronous: a worker may, and the first result must wait for it
      var request = new XMLHttpRequest();
      request.open("GET", new URL("../../../search/names.json", self.location.href).href, false);
      request.send();
      if (request.status === 200) termbaseNames = JSON.parse(request.responseText);
    } catch (error) {
      console.warn("search/names.json:", error);
    }
  }
  return termbaseNames[termbaseNormalized(query)];
}

var termbasePost = self.postMessage.bind(self);
self.postMessage = function (message) {
  if (message && message.type === 3 && message.data && Array.isArray(message.data.items)) {  // RESULT
    var entry = termbaseEntryFor(termbaseQuery);
    var items = message.data.items;
    var at = entry ? items.findIndex(function (group) { return group[0] && group[0].location.split("#")[0] === entry; }) : -1;
    if (at > 0) items.unshift(items.splice(at, 1)[0]);
  }
  return termbasePost.apply(self, arguments);
};

self.addEventListener("message", function (event) {
  var message = event.data;
  if (!message) return;
  if (message.type === 0 && message.data && message.data.config) {  // SETUP
    termbaseLang = message.data.config.lang[0] || "en";
  } else if (message.type === 2 && typeof message.data === "string" && self.lunr) {  // QUERY
    termbaseQuery = message.data;
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
