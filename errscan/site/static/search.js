// The index page's search: Pagefind's index of the error pages, in the browser.
const input = document.getElementById("q");
const hits = document.getElementById("hits");
let pagefind = null;

async function search() {
  if (pagefind === null) {
    pagefind = await import("../pagefind/pagefind.js");
    await pagefind.init();
  }
  const query = input.value.trim();
  hits.replaceChildren();
  if (!query) return;
  const found = await pagefind.search(query);
  for (const result of found.results.slice(0, 20)) {
    const data = await result.data();
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = data.url;
    link.textContent = data.meta.title || data.url;
    const excerpt = document.createElement("div");
    excerpt.className = "muted";
    excerpt.textContent = data.content.slice(0, 160);
    item.append(link, excerpt);
    hits.append(item);
  }
}
input.form.addEventListener("submit", (event) => { event.preventDefault(); search(); });
input.addEventListener("input", () => { search(); });
