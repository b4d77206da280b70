import QRCode from 'qrcode';

/** A QR code of `text` as an SVG document, generated on the server (the page loads no library). */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M', color: { dark: '#000000', light: '#ffffff' } });
}
