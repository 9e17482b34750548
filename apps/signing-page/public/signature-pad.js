// A signature drawn with a mouse, a finger or a pen on a canvas (pointer events), exported as a PNG data URL.
export function createSignaturePad(canvas) {
  const context = canvas.getContext('2d');
  let drawing = false;
  let strokes = 0;
  const reset = () => {
    context.fillStyle = '#fff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.lineWidth = 3;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.strokeStyle = '#111';
    strokes = 0;
  };
  const point = (event) => {
    const box = canvas.getBoundingClientRect();
    return [((event.clientX - box.left) * canvas.width) / box.width, ((event.clientY - box.top) * canvas.height) / box.height];
  };
  canvas.addEventListener('pointerdown', (event) => {
    drawing = true;
    canvas.setPointerCapture(event.pointerId);
    context.beginPath();
    context.moveTo(...point(event));
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!drawing) return;
    context.lineTo(...point(event));
    context.stroke();
    strokes += 1;
  });
  const stop = () => (drawing = false);
  canvas.addEventListener('pointerup', stop);
  canvas.addEventListener('pointercancel', stop);
  reset();
  return {
    clear: reset,
    isEmpty: () => strokes < 2,
    toDataUrl: () => canvas.toDataURL('image/png'),
  };
}
