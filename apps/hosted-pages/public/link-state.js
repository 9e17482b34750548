// What the link page makes of the API's answers (no DOM here): what the visitor will be asked to do, which field an
// error belongs beside, the words for a cap (and when to try again), and whether a code problem means starting again.
import { waitText } from './problem.js';

/** What the visitor does with a field of each type: unnamed ("Fill in a text field"), or before its label ("Fill in"). */
const FIELD_WORDS = {
  signature: ['Sign', 'Sign'],
  initials: ['Add your initials', 'Initial'],
  text: ['Fill in a text field', 'Fill in'],
  date: ['Enter a date', 'Enter a date'],
  checkbox: ['Tick a box', 'Tick'],
  attachment: ['Attach a file', 'Attach'],
};

/** One line per field the visitor will fill: "Sign", "Fill in: Company name"; the same line twice is one. */
export function fieldLines(fields = []) {
  const lines = fields.map((f) => {
    const [unnamed, verb] = FIELD_WORDS[f.type] ?? ['Fill in a field', 'Fill in'];
    return (f.label ? `${verb}: ${f.label}` : unnamed) + (f.required ? '' : ' (optional)');
  });
  return [...new Set(lines)];
}

/** A logo the page may show: a web (http or https) URL, else none. */
export function webImage(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null;
}

/** The link as the page shows it, whatever optional members the answer carries. */
export function linkView(link) {
  return {
    title: link.title || link.name || 'Document to sign',
    organization: link.organizationName || 'The sender',
    logoUrl: webImage(link.logoUrl),
    paused: link.status === 'paused' || link.enabled === false,
    testMode: link.testMode === true,
    lines: fieldLines(link.fields),
  };
}

const POINTER_FIELDS = { '/body/name': 'name', '/body/email': 'email', '/body/code': 'code', '/body/verification': 'code' };

/** Where an error is shown: beside `name`, `email` or `code`, or above the step's button (`form`). */
export function placeOf(error, step) {
  const pointed = (error.problem?.errors ?? []).map((e) => POINTER_FIELDS[e.pointer]).find(Boolean);
  if (pointed && (step === 'code') === (pointed === 'code')) return pointed;
  if (step === 'code' && mustStartAgain(error)) return 'code';
  if (error.status === 429 || error.status === 404 || error.slug === 'link-paused') return 'form';
  return step === 'code' ? 'code' : 'form';
}

/** Whether the code can no longer be used (expired, spent, or no attempts left): the visitor must start again. */
export function mustStartAgain(error) {
  if (error.slug === 'link-paused') return false;
  if ((error.problem?.errors ?? []).some((e) => e.pointer === '/body/verification')) return true;
  return /expired|start again|no (more )?(attempts|tries)|0 tries|new code/i.test(error.message);
}

/**
 * The page-wide state an error leaves: the link is gone (404, unless it is the code that is unknown: start again) or
 * paused (409 `link-paused`); otherwise none.
 */
export function pageStateOf(error) {
  if (error.status === 404 && !mustStartAgain(error)) return 'gone';
  if (error.slug === 'link-paused') return 'paused';
  return undefined;
}

/** The words shown for an error: the API's detail, and for a cap when the visitor can try again. */
export function messageOf(error, now = Date.now()) {
  if (error.status !== 429 || error.retryAfter === undefined || mustStartAgain(error)) return error.message;
  const at = new Date(now + error.retryAfter * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  const when = `${waitText(error.retryAfter)}${error.retryAfter >= 90 ? `, at ${at}` : ''}`;
  // The detail may already say when ("try again tomorrow (UTC)"): then the page only adds the visitor's own clock.
  return /try again/i.test(error.message) ? `${error.message} That is ${when}.` : `${error.message} You can try again ${when}.`;
}
