// The share page's script (src/web/share/share-page.ts): the page is complete without it, in the owner's zone.
// On a first visit (no zone chosen in the address) it shows the page again in the browser's own zone; the zone
// picker's "Show" button works without it.
(() => {
  const form = document.querySelector('form[data-share-zone]');
  if (!form) return;
  const params = new URLSearchParams(window.location.search);
  if (params.has('zone')) return;
  let zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return;
  }
  const select = form.querySelector('select[name="zone"]');
  if (!zone || !select || zone === select.value) return;
  params.set('zone', zone);
  window.location.replace(`${window.location.pathname}?${params.toString()}`);
})();
