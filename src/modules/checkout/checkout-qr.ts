import QRCode from 'qrcode';
import { KeelError } from '../../platform/errors';

/**
 * The longest text a checkout puts in a QR code (its payment request, ASCII once percent-encoded):
 * at error correction M it is a QR code of version 18 at most (89 modules a side), which a phone still
 * reads from a screen; `qrcode` itself refuses text past version 40. A payment request's optional
 * parts are shortened to fit (solanaPayUri); an EIP-681 request is never longer than about 230.
 */
export const QR_TEXT_MAX_LENGTH = 512;

/** A QR code of `text` as an SVG document, generated on the server (the page loads no library). */
export function qrSvg(text: string): Promise<string> {
  if (text.length > QR_TEXT_MAX_LENGTH) {
    return Promise.reject(new KeelError('PAYMENT_FAILED', `This payment request is too long for a QR code (${text.length} characters, at most ${QR_TEXT_MAX_LENGTH}): pay the address shown`));
  }
  return QRCode.toString(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M', color: { dark: '#000000', light: '#ffffff' } });
}
