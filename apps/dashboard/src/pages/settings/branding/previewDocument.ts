/**
 * The preview e-mail as a document the dashboard's Content-Security-Policy lets draw. A `srcdoc` frame inherits the
 * page's policy, whose styles need its nonce: e-mail HTML styles each element inline (`style="..."`), which that
 * policy refuses (even while DOMParser reads it, so the attributes are read as text). So each inline style becomes a
 * rule (`!important`, as an inline style outranks the sheet) in one `<style>` element carrying the nonce, and the
 * e-mail's own `<style>` elements get the nonce too. Nothing in the e-mail runs: the frame is sandboxed without scripts.
 */
export function previewDocument(html: string, nonce: string | undefined): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const rules: string[] = [];
  doc.querySelectorAll<HTMLElement>('[style]').forEach((element, index) => {
    const declarations = declarationsOf(element.getAttribute('style') ?? '');
    element.removeAttribute('style');
    if (declarations.length === 0) return;
    element.setAttribute('data-preview-style', String(index));
    rules.push(`[data-preview-style="${index}"] { ${declarations.join('; ')} }`);
  });
  const sheet = doc.createElement('style');
  // `<` never reaches the serialized sheet, so nothing in a value can close the element.
  sheet.textContent = rules.join('\n').replace(/</g, '\\3c ');
  doc.head.append(sheet);
  if (nonce) doc.querySelectorAll('style').forEach((style) => style.setAttribute('nonce', nonce));
  return `<!doctype html>\n${doc.documentElement.outerHTML}`;
}

/** A style attribute's declarations, parsed by the CSSOM (which the policy allows) and written back, each important. */
function declarationsOf(style: string): string[] {
  const sheet = new CSSStyleSheet();
  try {
    sheet.replaceSync(`x { ${style} }`);
  } catch {
    return [];
  }
  const rule = sheet.cssRules[0] as CSSStyleRule | undefined;
  if (!rule?.style) return [];
  return Array.from(rule.style, (property) => `${property}: ${rule.style.getPropertyValue(property)} !important`);
}

/** The nonce the gateway gave this page (`<meta property="csp-nonce">`, which react-aria reads too). */
export function pageStyleNonce(): string | undefined {
  return document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce || undefined;
}
