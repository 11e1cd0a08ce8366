// Puppeteer never downloads a browser here: the platform drives the system Chromium.
module.exports = {
  skipDownload: true,
  executablePath: process.env.PUPPETEER_EXECUTABLE_PATH || '/usr/bin/chromium',
};
