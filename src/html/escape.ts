// A leaf shared by the HTML report (src/dispatch/report) and the local service's pages
// (src/server/web): it imports nothing, so neither side gains an arrow to the other.

/** Text safe inside HTML elements and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
