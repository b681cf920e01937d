console.error(
  'chunklog: `npm start` is not built yet: the gateway and worker services do not exist in this tree.',
);
process.exit(1);
