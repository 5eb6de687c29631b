/* Calls the classifier compiled by tfn-aot: ./predict F0 F1 F2 F3 */
#include <stdio.h>
#include <stdlib.h>

#include "predict.h"

int main(int argc, char **argv) {
  if (argc != 1 + PREDICT_X_SIZE) {
    fprintf(stderr, "usage: %s F0 F1 F2 F3\n", argv[0]);
    return 2;
  }
  float x[PREDICT_X_SIZE];
  for (int i = 0; i < PREDICT_X_SIZE; ++i) x[i] = strtof(argv[i + 1], NULL);
  float probabilities[PREDICT_OUT0_SIZE];
  int64_t label[PREDICT_OUT1_SIZE];
  int status = predict(x, probabilities, label);
  if (status != 0) {
    fprintf(stderr, "predict failed (status %d): %s\n", status, predict_last_error());
    return 1;
  }
  printf("probabilities:");
  for (int i = 0; i < PREDICT_OUT0_SIZE; ++i) printf(" %.6f", probabilities[i]);
  printf("\nclass: %lld\n", (long long)label[0]);
  return 0;
}
