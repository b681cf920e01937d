import { copyText } from './clipboard';

/**
 * A Svelte action that shows `html` (a sealed answer as `renderText` made and sanitized it) in
 * its element, each code block in a box with a "Copy code" button. The button holds no text (its
 * visible label is CSS content), so the element's text stays the answer's own; the HTML itself
 * is the sanitizer's, set as it is.
 */
export function richText(node: HTMLElement, html: string): { update(html: string): void } {
  let shown: string | null = null;
  const render = (next: string) => {
    if (next === shown) return;
    shown = next;
    node.innerHTML = next;
    for (const pre of node.querySelectorAll('pre')) {
      const block = document.createElement('div');
      block.className = 'code-block';
      pre.replaceWith(block);
      block.append(pre, copyCodeButton(pre));
    }
  };
  render(html);
  return { update: render };
}

function copyCodeButton(pre: HTMLElement): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy-code';
  button.setAttribute('aria-label', 'Copy code');
  button.addEventListener('click', async () => {
    const code = pre.querySelector('code') ?? pre;
    const copied = await copyText(code.textContent ?? '');
    flash(button, copied ? 'copied' : 'failed');
  });
  return button;
}

/** Shows "Copied" (or "Copy failed") on a copy button for two seconds. */
export function flash(button: HTMLElement, state: 'copied' | 'failed'): void {
  button.dataset.state = state;
  button.title = state === 'copied' ? 'Copied' : 'Copy failed';
  setTimeout(() => {
    delete button.dataset.state;
    button.removeAttribute('title');
  }, 2000);
}
