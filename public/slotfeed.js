// slotfeed's one page script (docs/web.md, "Pages"), loaded by every page from this origin. It only adds to what
// the HTML already does: every form works without it, it just asks before destructive ones.
// - button[data-copy=ID] copies the value of the input with that id, and says so to screen readers too;
// - form[data-confirm="…"] asks for confirmation before it is sent (rotate, revoke, delete).
(() => {
  const announce = (() => {
    let region;
    return (text) => {
      if (!region) {
        region = document.createElement('p');
        region.className = 'visually-hidden';
        region.setAttribute('aria-live', 'polite');
        region.style.cssText = 'position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)';
        document.body.append(region);
      }
      region.textContent = text;
    };
  })();

  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', async () => {
      const input = document.getElementById(button.dataset.copy);
      if (!input) return;
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        // Without a secure context (plain http on another host) the clipboard API is missing.
        input.select();
        document.execCommand('copy');
      }
      const label = button.textContent;
      button.textContent = 'Copied';
      announce('Copied to the clipboard');
      setTimeout(() => (button.textContent = label), 2000);
    });
  }

  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
})();
