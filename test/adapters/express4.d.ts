// `express4` is express@4 under another name, for running the suite against both majors.
declare module 'express4' {
  import express from 'express';
  export default express;
}
