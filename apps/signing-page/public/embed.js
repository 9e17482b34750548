// <sigil-signing url="https://.../sign#token=sgls_..."></sigil-signing>: the hosted signing page in an iframe, its
// outcomes re-dispatched on the element as DOM events (`sigil:ready`, `sigil:signed`, `sigil:declined`, `sigil:error`,
// each with the message as `detail`). Load it from the signing host: <script type="module" src=".../sign/embed.js">.
class SigilSigning extends HTMLElement {
  static observedAttributes = ['url'];

  connectedCallback() {
    this.style.display ||= 'block';
    this.onMessage = (event) => {
      if (!this.frame || event.source !== this.frame.contentWindow) return;
      const data = event.data;
      if (!data || data.source !== 'sigil-signing' || typeof data.type !== 'string') return;
      this.dispatchEvent(new CustomEvent(`sigil:${data.type}`, { detail: data, bubbles: true }));
    };
    window.addEventListener('message', this.onMessage);
    this.render();
  }

  disconnectedCallback() {
    window.removeEventListener('message', this.onMessage);
  }

  attributeChangedCallback() {
    if (this.isConnected) this.render();
  }

  render() {
    const url = this.getAttribute('url');
    if (!url) return;
    this.frame ??= Object.assign(document.createElement('iframe'), { title: 'Sign the document' });
    Object.assign(this.frame.style, { width: '100%', height: this.getAttribute('height') || '80vh', border: '0' });
    this.frame.setAttribute('allow', 'clipboard-write');
    this.frame.src = url;
    if (!this.frame.isConnected) this.append(this.frame);
  }
}

if (!customElements.get('sigil-signing')) customElements.define('sigil-signing', SigilSigning);
