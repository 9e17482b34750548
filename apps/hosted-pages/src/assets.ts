import path from 'node:path';

/**
 * The files of the two hosted pages people open without an account (HTML, CSS, ES modules, served as they are): the
 * viewer page (`view.html`, under `/view`) and the always-on link page (`link.html`, under `/l/{id}`). One folder, one
 * stylesheet: both are a single card of the same product, unlike the signing page's document view.
 */
export const HOSTED_PAGES_DIR = path.resolve(import.meta.dirname, '../public');

/** A link's id as the contract spells it (`SigningLinkId`): only these paths under `/l/` are the link page. */
export const SIGNING_LINK_ID = /^lnk_[A-Za-z0-9]{10,40}$/;
